#include "training/monitored_training_session.h"

#include <optional>

#include "hooks/checkpoint_saver_hook.h"
#include "hooks/step_counter_hook.h"
#include "hooks/summary_saver_hook.h"

namespace tw {
namespace {

// A (secs, steps) pair after TF's rule: both left at their defaults → the pair's default; one left at
// its default → that one is None; both given → both kept (and the timer rejects them, T3).
struct Frequency {
  std::optional<double> secs;
  std::optional<int64_t> steps;
  bool any_positive() const { return (secs && *secs > 0) || (steps && *steps > 0); }
};

Frequency ResolveFrequency(const Options &options, tw_option secs_key, tw_option steps_key, Frequency defaults) {
  const tw_option_state secs_state = options.State(secs_key);
  const tw_option_state steps_state = options.State(steps_key);
  if (secs_state == TW_OPTION_DEFAULT && steps_state == TW_OPTION_DEFAULT) return defaults;
  Frequency given;
  if (secs_state == TW_OPTION_SET) given.secs = options.Double(secs_key);
  if (steps_state == TW_OPTION_SET) given.steps = options.Int64(steps_key);
  return given;
}

// The session's hook list, and the references to the hooks made here, released once the session
// has taken its own (or failed to be created).
class HookList {
 public:
  ~HookList() {
    for (Hook *hook : made_) hook->Unref();
  }
  void Add(Hook *const *hooks, size_t count) { all_.insert(all_.end(), hooks, hooks + count); }
  // Adds a hook made here, taking over the constructor's reference.
  void Adopt(Hook *hook) {
    made_.push_back(hook);
    all_.push_back(hook);
  }
  const std::vector<Hook *> &all() const { return all_; }

 private:
  std::vector<Hook *> all_;
  std::vector<Hook *> made_;
};

// A job of many ranks with sharded variables: each rank writes its own part of every checkpoint.
// CheckpointSaverHook if there is a checkpoint dir and a checkpoint frequency > 0 (T2, T3).
Status AddCheckpointSaver(const Options &options, bool is_chief, HookList *list) {
  const std::string *checkpoint_dir = options.String(TW_OPT_CHECKPOINT_DIR);
  const Frequency checkpoints = ResolveFrequency(options, TW_OPT_CHECKPOINT_EVERY_N_SECS,
                                                 TW_OPT_CHECKPOINT_EVERY_N_STEPS, {600.0, std::nullopt});  // T2
  if (checkpoint_dir == nullptr || !checkpoints.any_positive()) return Status();
  Options hook_options = options;
  TW_RETURN_IF_ERROR(checkpoints.secs ? hook_options.SetDouble(TW_OPT_EVERY_N_SECS, *checkpoints.secs)
                                      : hook_options.SetNone(TW_OPT_EVERY_N_SECS));
  TW_RETURN_IF_ERROR(checkpoints.steps ? hook_options.SetInt64(TW_OPT_EVERY_N_STEPS, *checkpoints.steps)
                                       : hook_options.SetNone(TW_OPT_EVERY_N_STEPS));
  CheckpointSaverConfig config;
  TW_RETURN_IF_ERROR(MakeCheckpointSaverConfig(*checkpoint_dir, hook_options, &config));  // T3
  config.chief = is_chief;
  Hook *hook = nullptr;
  TW_RETURN_IF_ERROR(NewCheckpointSaverHook(std::move(config), &hook));
  list->Adopt(hook);
  return Status();
}

// The hooks MonitoredTrainingSession adds before the user's (T6), in TF's order.
Status AddDefaultHooks(const Options &options, bool is_chief, Hook *const *chief_only_hooks, size_t chief_only_count,
                       HookList *list) {
  if (is_chief) {  // T6
    list->Add(chief_only_hooks, chief_only_count);
    const std::string *checkpoint_dir = options.String(TW_OPT_CHECKPOINT_DIR);
    const std::string *summary_dir = options.String(TW_OPT_SUMMARY_DIR);
    if (summary_dir == nullptr) summary_dir = checkpoint_dir;  // T7

    const int64_t log_step_count_steps = options.Int64(TW_OPT_STEP_COUNT_EVERY_N_STEPS);
    if (summary_dir != nullptr && log_step_count_steps > 0) {
      StepCounterConfig config;
      config.every.steps = log_step_count_steps;
      config.output_dir = *summary_dir;
      Hook *hook = nullptr;
      TW_RETURN_IF_ERROR(NewStepCounterHook(std::move(config), &hook));
      list->Adopt(hook);
    }
    const Frequency summaries = ResolveFrequency(options, TW_OPT_SUMMARY_EVERY_N_SECS, TW_OPT_SUMMARY_EVERY_N_STEPS,
                                                 {std::nullopt, 100});  // T1
    if (summary_dir != nullptr && summaries.any_positive()) {
      SummarySaverConfig config;
      config.every.secs = summaries.secs;
      config.every.steps = summaries.steps;
      config.output_dir = *summary_dir;
      // T11: TF's default summary op holds the user's summaries only: scalars, and histograms of the
      // values TW_OPT_SUMMARY_HISTOGRAM_NAMES asks for (a histogram of every variable costs a pass over
      // the whole model on the first run).
      config.histograms.emplace();
      if (const std::string *names = options.String(TW_OPT_SUMMARY_HISTOGRAM_NAMES)) {
        TW_RETURN_IF_ERROR(SplitNameList(*names, "TW_OPT_SUMMARY_HISTOGRAM_NAMES", &*config.histograms));
      }
      Hook *hook = nullptr;
      TW_RETURN_IF_ERROR(NewSummarySaverHook(std::move(config), &hook));
      list->Adopt(hook);
    }
    if (!IsShardedJob(options)) TW_RETURN_IF_ERROR(AddCheckpointSaver(options, is_chief, list));
  }
  // A sharded job's checkpoint needs every rank's part: every rank saves, at the same steps (the
  // checkpoint frequency is set alike on every rank), or the others would wait in the vote.
  if (IsShardedJob(options)) TW_RETURN_IF_ERROR(AddCheckpointSaver(options, is_chief, list));
  return Status();
}

}  // namespace

Status CreateMonitoredTrainingSession(const Options &options, Hook *const *hooks, size_t hook_count,
                                      Hook *const *chief_only_hooks, size_t chief_only_count, Session **out) {
  if (hook_count > 0 && hooks == nullptr)
    return Errorf(TW_INVALID_ARGUMENT, "hooks is NULL but n_hooks is %zu", hook_count);
  if (chief_only_count > 0 && chief_only_hooks == nullptr) {
    return Errorf(TW_INVALID_ARGUMENT, "chief_only_hooks is NULL but n_chief_only_hooks is %zu", chief_only_count);
  }
  Options session_options = options;
  if (options.State(TW_OPT_MAX_WAIT_SECS) == TW_OPTION_DEFAULT) {
    TW_RETURN_IF_ERROR(session_options.SetDouble(TW_OPT_MAX_WAIT_SECS, 7200.0));  // T10: MTS's own default
  }
  const bool is_chief = IsChief(options);  // D11: rank 0 in a job, unless TW_OPT_IS_CHIEF says otherwise
  HookList list;
  Status made = options.registration;
  if (made.ok()) made = AddDefaultHooks(options, is_chief, chief_only_hooks, chief_only_count, &list);
  if (!made.ok()) {
    // This rank failed before the job's first collective round (its registration of the variables, a
    // hook it cannot make — the chief's summary directory): no hook runs, and in a job its session's
    // creation still takes part in that round, so that every rank fails with this rank's reason (D1).
    if (options.collective == nullptr) return made;
    (void)session_options.RecordError(made);
    return Session::Create(session_options, nullptr, 0, /*recoverable=*/true, out);
  }
  list.Add(hooks, hook_count);  // T5: a worker gets the user's hooks only
  return Session::Create(session_options, list.all().data(), list.all().size(), /*recoverable=*/true, out);  // T8
}

}  // namespace tw
