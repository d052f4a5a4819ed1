#include "session/options.h"

#include "base/enum_bits.h"
#include "distributed/shared_failure.h"
#include "trainwatch/hooks.h"

#include <cctype>
#include <cmath>
#include <cstring>

namespace tw {
namespace {

struct OptionInfo {
  tw_option key;
  const char *name;
  OptionType type;
  int64_t int_default;
  double double_default;
  int64_t int_min;  // inclusive bounds for int64 options
  int64_t int_max;
  double double_min;  // inclusive lower bound for double options (-inf: none)
  bool positive;      // double options: must also be > 0
  uint32_t read_by;   // TW_OPTION_READ_BY_* bits
};

constexpr uint32_t kSession = TW_OPTION_READ_BY_SESSION;
constexpr uint32_t kTraining = TW_OPTION_READ_BY_TRAINING_SESSION;
constexpr uint32_t kSaver = TW_OPTION_READ_BY_SAVER;
constexpr uint32_t kCheckpointHook = TW_OPTION_READ_BY_CHECKPOINT_HOOK;
constexpr uint32_t kHooks = TW_OPTION_READ_BY_HOOKS;
constexpr uint32_t kJob = TW_OPTION_READ_BY_JOB;

constexpr int64_t kMaxI64 = INT64_MAX;
constexpr int64_t kMinI64 = INT64_MIN;
constexpr double kNoMin = -HUGE_VAL;

// The one place an option is defined: key, name, type, default, bounds, readers (tw_option_info).
const OptionInfo kOptions[] = {
    {TW_OPT_IS_CHIEF, "TW_OPT_IS_CHIEF", OptionType::kInt64, 1, 0, 0, 1, 0, false, kSession | kSaver},
    {TW_OPT_CHECKPOINT_DIR, "TW_OPT_CHECKPOINT_DIR", OptionType::kString, 0, 0, 0, 0, 0, false, kSession},
    {TW_OPT_MAX_RECOVERY_ATTEMPTS, "TW_OPT_MAX_RECOVERY_ATTEMPTS", OptionType::kInt64, 10, 0, -1, kMaxI64, 0, false,
     kSession},
    {TW_OPT_RECOVERY_BACKOFF_SECS, "TW_OPT_RECOVERY_BACKOFF_SECS", OptionType::kDouble, 0, 1.0, 0, 0, 0, false,
     kSession},
    {TW_OPT_RECOVERY_BACKOFF_MAX_SECS, "TW_OPT_RECOVERY_BACKOFF_MAX_SECS", OptionType::kDouble, 0, 60.0, 0, 0, 0, false,
     kSession},
    {TW_OPT_RECOVERY_WAIT_SECS, "TW_OPT_RECOVERY_WAIT_SECS", OptionType::kDouble, 0, 30.0, 0, 0, 0, false, kSession},
    {TW_OPT_MAX_WAIT_SECS, "TW_OPT_MAX_WAIT_SECS", OptionType::kDouble, 0, 1800.0, 0, 0, kNoMin, false, kSession},
    {TW_OPT_AUTO_INCREMENT_GLOBAL_STEP, "TW_OPT_AUTO_INCREMENT_GLOBAL_STEP", OptionType::kInt64, 1, 0, 0, 1, 0, false,
     kSession},
    {TW_OPT_INITIAL_GLOBAL_STEP, "TW_OPT_INITIAL_GLOBAL_STEP", OptionType::kInt64, 0, 0, kMinI64 + 1, kMaxI64, 0, false,
     kSession},
    {TW_OPT_CHECK_NUMERICS, "TW_OPT_CHECK_NUMERICS", OptionType::kInt64, 0, 0, 0, 1, 0, false, kSession},
    {TW_OPT_MAX_TO_KEEP, "TW_OPT_MAX_TO_KEEP", OptionType::kInt64, 5, 0, 0, kMaxI64, 0, false, kSession | kSaver},
    {TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS, "TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS", OptionType::kDouble, 0, 10000.0, 0,
     0, 0, true, kSession | kSaver},
    {TW_OPT_CHECKPOINT_EVERY_N_SECS, "TW_OPT_CHECKPOINT_EVERY_N_SECS", OptionType::kDouble, 0, 600.0, 0, 0, 0, false,
     kTraining},
    {TW_OPT_CHECKPOINT_EVERY_N_STEPS, "TW_OPT_CHECKPOINT_EVERY_N_STEPS", OptionType::kInt64, 0, 0, 0, kMaxI64, 0, false,
     kTraining},
    {TW_OPT_CHECKPOINT_BASENAME, "TW_OPT_CHECKPOINT_BASENAME", OptionType::kString, 0, 0, 0, 0, 0, false,
     kTraining | kCheckpointHook},
    {TW_OPT_ASYNC_CHECKPOINT, "TW_OPT_ASYNC_CHECKPOINT", OptionType::kInt64, 1, 0, 0, 1, 0, false,
     kTraining | kCheckpointHook},
    {TW_OPT_SUMMARY_DIR, "TW_OPT_SUMMARY_DIR", OptionType::kString, 0, 0, 0, 0, 0, false, kTraining},
    {TW_OPT_SUMMARY_EVERY_N_STEPS, "TW_OPT_SUMMARY_EVERY_N_STEPS", OptionType::kInt64, 100, 0, 0, kMaxI64, 0, false,
     kTraining},
    {TW_OPT_SUMMARY_EVERY_N_SECS, "TW_OPT_SUMMARY_EVERY_N_SECS", OptionType::kDouble, 0, 0.0, 0, 0, 0, false,
     kTraining},
    {TW_OPT_STEP_COUNT_EVERY_N_STEPS, "TW_OPT_STEP_COUNT_EVERY_N_STEPS", OptionType::kInt64, 100, 0, 0, kMaxI64, 0,
     false, kTraining},
    {TW_OPT_DEFERRED_CHECKPOINT_LISTENERS, "TW_OPT_DEFERRED_CHECKPOINT_LISTENERS", OptionType::kInt64, 0, 0, 0, 1, 0,
     false, kTraining | kCheckpointHook},
    {TW_OPT_CATCH_PREEMPTION_SIGNALS, "TW_OPT_CATCH_PREEMPTION_SIGNALS", OptionType::kInt64, 0, 0, 0, 1, 0, false,
     kSession},
    {TW_OPT_CHECKPOINT_RECYCLE_FILES, "TW_OPT_CHECKPOINT_RECYCLE_FILES", OptionType::kInt64, 0, 0, 0, 1, 0, false,
     kSession | kSaver},
    {TW_OPT_COLLECTIVE_TIMEOUT_SECS, "TW_OPT_COLLECTIVE_TIMEOUT_SECS", OptionType::kDouble, 0, 600.0, 0, 0, kNoMin,
     false, kSession | kSaver | kJob},
    {TW_OPT_VOTE_EVERY_N_RUNS, "TW_OPT_VOTE_EVERY_N_RUNS", OptionType::kInt64, 1, 0, 1, kMaxI64, 0, false,
     kSession | kJob},
    {TW_OPT_RESTORE_VIA_BROADCAST, "TW_OPT_RESTORE_VIA_BROADCAST", OptionType::kInt64, 0, 0, 0, 1, 0, false,
     kSession | kJob},
    {TW_OPT_NAN_ACTION, "TW_OPT_NAN_ACTION", OptionType::kInt64, TW_NAN_ACTION_FAIL, 0, TW_NAN_ACTION_FAIL,
     TW_NAN_ACTION_ROLLBACK, 0, false, kHooks},
    {TW_OPT_NAN_DETECT_INF, "TW_OPT_NAN_DETECT_INF", OptionType::kInt64, 1, 0, 0, 1, 0, false, kHooks},
    {TW_OPT_NAN_EVERY_N_STEPS, "TW_OPT_NAN_EVERY_N_STEPS", OptionType::kInt64, 1, 0, 1, kMaxI64, 0, false, kHooks},
    {TW_OPT_NAN_MAX_ROLLBACKS, "TW_OPT_NAN_MAX_ROLLBACKS", OptionType::kInt64, 3, 0, 0, kMaxI64, 0, false, kHooks},
    {TW_OPT_EVERY_N_STEPS, "TW_OPT_EVERY_N_STEPS", OptionType::kInt64, TW_UNSET, 0, kMinI64, kMaxI64, 0, false,
     kCheckpointHook | kHooks},
    {TW_OPT_EVERY_N_SECS, "TW_OPT_EVERY_N_SECS", OptionType::kDouble, 0, TW_UNSET_SECS, 0, 0, kNoMin, false,
     kCheckpointHook | kHooks},
    {TW_OPT_OUTPUT_DIR, "TW_OPT_OUTPUT_DIR", OptionType::kString, 0, 0, 0, 0, 0, false, kHooks},
    {TW_OPT_LOG_AT_END, "TW_OPT_LOG_AT_END", OptionType::kInt64, 0, 0, 0, 1, 0, false, kHooks},
    {TW_OPT_LOG_MAX_ELEMENTS, "TW_OPT_LOG_MAX_ELEMENTS", OptionType::kInt64, 32, 0, 0, kMaxI64, 0, false, kHooks},
    {TW_OPT_SUMMARY_HISTOGRAMS, "TW_OPT_SUMMARY_HISTOGRAMS", OptionType::kInt64, 1, 0, 0, 1, 0, false, kHooks},
    {TW_OPT_WAIT_POLL_SECS, "TW_OPT_WAIT_POLL_SECS", OptionType::kDouble, 0, 0.5, 0, 0, 0, false, kHooks},
    {TW_OPT_WAIT_MAX_SECS, "TW_OPT_WAIT_MAX_SECS", OptionType::kDouble, 0, -1.0, 0, 0, kNoMin, false, kHooks},
    {TW_OPT_SUMMARY_HISTOGRAM_NAMES, "TW_OPT_SUMMARY_HISTOGRAM_NAMES", OptionType::kString, 0, 0, 0, 0, 0, false,
     kTraining | kHooks},
};

const OptionInfo *Find(tw_option key) {
  for (const OptionInfo &info : kOptions) {
    if (info.key == key) return &info;
  }
  return nullptr;
}

const char *TypeName(OptionType type) {
  switch (type) {
    case OptionType::kInt64: return "int64";
    case OptionType::kDouble: return "double";
    case OptionType::kString: return "string";
  }
  return "?";
}

// Finds `key` and checks that it has `type`.
Status Lookup(tw_option key, OptionType type, const OptionInfo **out) {
  const OptionInfo *info = Find(key);
  if (info == nullptr) return Errorf(TW_INVALID_ARGUMENT, "unknown option key %d", static_cast<int>(key));
  if (info->type != type) {
    return Errorf(TW_INVALID_ARGUMENT, "option %s is of type %s, not %s", info->name, TypeName(info->type),
                  TypeName(type));
  }
  *out = info;
  return Status();
}

}  // namespace

Status CheckOptionKey(const tw_option &key) {
  const int32_t raw = EnumBits(key);
  for (const OptionInfo &info : kOptions) {
    if (static_cast<int32_t>(info.key) == raw) return Status();
  }
  return Errorf(TW_INVALID_ARGUMENT, "unknown option key %d (not a TW_OPT_* value)", static_cast<int>(raw));
}

namespace {

tw_option_info InfoOf(const OptionInfo &option) {
  tw_option_info info = TW_OPTION_INFO_INIT;
  info.key = option.key;
  info.name = option.name;
  info.read_by = option.read_by;
  switch (option.type) {
    case OptionType::kInt64:
      info.type = TW_OPTION_TYPE_INT64;
      info.int64_default = option.int_default;
      info.int64_min = option.int_min;
      info.int64_max = option.int_max;
      break;
    case OptionType::kDouble:
      info.type = TW_OPTION_TYPE_DOUBLE;
      info.double_default = option.double_default;
      info.double_min = option.double_min;
      info.double_min_exclusive = option.positive ? 1 : 0;
      break;
    case OptionType::kString: info.type = TW_OPTION_TYPE_STRING; break;
  }
  return info;
}

bool SameNameIgnoringCase(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  }
  return *a == *b;
}

}  // namespace

Status DescribeOption(const tw_option &key, tw_option_info *out) {
  const int32_t raw = EnumBits(key);
  for (const OptionInfo &option : kOptions) {
    if (static_cast<int32_t>(option.key) == raw) {
      *out = InfoOf(option);
      return Status();
    }
  }
  return Errorf(TW_NOT_FOUND, "unknown option key %d (not a TW_OPT_* value)", static_cast<int>(raw));
}

Status DescribeOptionNamed(const char *name, tw_option_info *out) {
  static constexpr size_t kPrefix = sizeof("TW_OPT_") - 1;
  for (const OptionInfo &option : kOptions) {
    if (SameNameIgnoringCase(name, option.name) || SameNameIgnoringCase(name, option.name + kPrefix)) {
      *out = InfoOf(option);
      return Status();
    }
  }
  return Errorf(TW_NOT_FOUND, "no option named '%s'", name);
}

const Options &DefaultOptions() {
  static const Options defaults;
  return defaults;
}

bool IsChief(const Options &options) {
  if (options.collective != nullptr && options.State(TW_OPT_IS_CHIEF) == TW_OPTION_DEFAULT) {
    return options.collective->rank() == 0;
  }
  return options.Int64(TW_OPT_IS_CHIEF) != 0;
}

bool IsShardedJob(const Options &options) { return options.collective != nullptr && !options.shards.empty(); }

checkpoint::SaverOptions SaverOptionsOf(const Options &options) {
  checkpoint::SaverOptions saver;
  saver.max_to_keep = options.Int64(TW_OPT_MAX_TO_KEEP);
  saver.keep_checkpoint_every_n_hours = options.Double(TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS);
  saver.recycle_files = options.Int64(TW_OPT_CHECKPOINT_RECYCLE_FILES) != 0;
  // A handle of the saver's own: its first failed operation ends its use of the collective (D9).
  if (options.collective != nullptr) saver.collective = options.collective->Fork();
  saver.shards = options.shards;
  saver.chief = IsChief(options);
  saver.collective_timeout_secs = options.Double(TW_OPT_COLLECTIVE_TIMEOUT_SECS);
  return saver;
}

Status CreateSaverOf(const Options &options, std::unique_ptr<checkpoint::Saver> *out) {
  checkpoint::SaverOptions saver_options = SaverOptionsOf(options);
  Status local = options.registration;
  std::unique_ptr<checkpoint::Saver> saver;
  if (local.ok()) local = checkpoint::Saver::Create(options.variables, saver_options, &saver);
  if (const Collective *collective = saver_options.collective.get()) {
    // The job's first round for this saver (D1, D17): a rank whose registration failed (it may not even
    // know the job is sharded) fails every rank's creation, instead of leaving the others waiting in the
    // first save.
    const double timeout = saver_options.collective_timeout_secs;
    std::vector<int64_t> slot = {FailureSlot(*collective, local)};
    TW_RETURN_IF_ERROR(collective->Allreduce(&slot, TW_REDUCE_MAX, timeout, "creating the saver"));
    Status failure;
    TW_RETURN_IF_ERROR(ShareFailure(*collective, timeout, slot[0], local.message(), "creating the saver", &failure));
    TW_RETURN_IF_ERROR(failure);
  }
  TW_RETURN_IF_ERROR(local);
  *out = std::move(saver);
  return Status();
}

}  // namespace tw

using tw::Errorf;
using tw::Status;

tw_options::tw_options() : recoverable{TW_ABORTED, TW_UNAVAILABLE} {
  for (const tw::OptionInfo &info : tw::kOptions) {
    if (info.type == tw::OptionType::kInt64) ints[info.key] = info.int_default;
    if (info.type == tw::OptionType::kDouble) doubles[info.key] = info.double_default;
  }
}

Status tw_options::SetInt64(tw_option key, int64_t value) {
  const tw::OptionInfo *info = nullptr;
  TW_RETURN_IF_ERROR(tw::Lookup(key, tw::OptionType::kInt64, &info));
  if (value < info->int_min || value > info->int_max) {
    return Errorf(TW_INVALID_ARGUMENT, "%s must be in [%lld, %lld], got %lld", info->name,
                  static_cast<long long>(info->int_min), static_cast<long long>(info->int_max),
                  static_cast<long long>(value));
  }
  ints[key] = value;
  states[key] = TW_OPTION_SET;
  return Status();
}

Status tw_options::SetDouble(tw_option key, double value) {
  const tw::OptionInfo *info = nullptr;
  TW_RETURN_IF_ERROR(tw::Lookup(key, tw::OptionType::kDouble, &info));
  if (std::isnan(value) || value < info->double_min || (info->positive && value <= 0)) {
    return Errorf(TW_INVALID_ARGUMENT, "%s must be a %s number of seconds/hours, got %g", info->name,
                  info->positive ? "positive" : "non-negative", value);
  }
  doubles[key] = value;
  states[key] = TW_OPTION_SET;
  return Status();
}

Status tw_options::SetString(tw_option key, const char *value) {
  const tw::OptionInfo *info = nullptr;
  TW_RETURN_IF_ERROR(tw::Lookup(key, tw::OptionType::kString, &info));
  if (value == nullptr) {
    strings.erase(key);
    states.erase(key);
  } else {
    strings[key] = value;
    states[key] = TW_OPTION_SET;
  }
  return Status();
}

Status tw_options::SetNone(tw_option key) {
  const tw::OptionInfo *info = tw::Find(key);
  if (info == nullptr) return Errorf(TW_INVALID_ARGUMENT, "unknown option key %d", static_cast<int>(key));
  if (info->type == tw::OptionType::kInt64) ints[key] = info->int_default;
  if (info->type == tw::OptionType::kDouble) doubles[key] = info->double_default;
  if (info->type == tw::OptionType::kString) strings.erase(key);
  states[key] = TW_OPTION_NONE;
  return Status();
}

Status tw_options::GetState(tw_option key, tw_option_state *out) const {
  if (tw::Find(key) == nullptr) return Errorf(TW_INVALID_ARGUMENT, "unknown option key %d", static_cast<int>(key));
  *out = State(key);
  return Status();
}

tw_option_state tw_options::State(tw_option key) const {
  auto it = states.find(key);
  return it == states.end() ? TW_OPTION_DEFAULT : it->second;
}

Status tw_options::GetInt64(tw_option key, int64_t *out) const {
  const tw::OptionInfo *info = nullptr;
  TW_RETURN_IF_ERROR(tw::Lookup(key, tw::OptionType::kInt64, &info));
  *out = ints.at(key);
  return Status();
}

Status tw_options::GetDouble(tw_option key, double *out) const {
  const tw::OptionInfo *info = nullptr;
  TW_RETURN_IF_ERROR(tw::Lookup(key, tw::OptionType::kDouble, &info));
  *out = doubles.at(key);
  return Status();
}

Status tw_options::GetString(tw_option key, const char **out) const {
  const tw::OptionInfo *info = nullptr;
  TW_RETURN_IF_ERROR(tw::Lookup(key, tw::OptionType::kString, &info));
  const std::string *value = String(key);
  *out = value != nullptr ? value->c_str() : nullptr;
  return Status();
}

const std::string *tw_options::String(tw_option key) const {
  auto it = strings.find(key);
  return it == strings.end() ? nullptr : &it->second;
}

Status tw_options::SetRecoverable(tw_status status, bool is_recoverable) {
  if (status == TW_OK || status == TW_OUT_OF_RANGE || status == TW_STOP_ITERATION) {
    return Errorf(TW_INVALID_ARGUMENT, "%s ends a run cleanly and cannot be made recoverable",
                  status == TW_OK             ? "TW_OK"
                  : status == TW_OUT_OF_RANGE ? "TW_OUT_OF_RANGE"
                                              : "TW_STOP_ITERATION");
  }
  if (is_recoverable) {
    recoverable.insert(status);
  } else {
    recoverable.erase(status);
  }
  return Status();
}

Status tw_options::RecordError(const Status &failure) {
  if (registration.ok()) registration = failure;
  return failure;
}

Status tw_options::AddVariable(const tw_tensor *in) {
  tw_tensor view;
  TW_RETURN_IF_ERROR(tw::ReadTensor(in, "variable", &view, tw::Place::kHostOrDevice));  // V5
  const tw_tensor *var = &view;
  if (var->name == nullptr || var->name[0] == '\0') {
    return Status(TW_INVALID_ARGUMENT, "variable has no name (tw_tensor.name is NULL or empty)");
  }
  const std::string name = var->name;
  if (name == "global_step") {
    return Status(TW_INVALID_ARGUMENT, "variable name 'global_step' is reserved for the session's global step");
  }
  if (!tw::IsContiguous(*var)) {
    return Errorf(TW_INVALID_ARGUMENT, "variable '%s' is not contiguous; register a row-major buffer", name.c_str());
  }
  for (const tw::TensorRef &existing : variables) {
    if (existing.name() == name) return Errorf(TW_ALREADY_EXISTS, "variable '%s' is already registered", name.c_str());
  }
  variables.emplace_back(*var, name);
  return Status();
}

Status tw_options::AddShard(const tw_tensor *in, const int64_t *global_shape, const int64_t *offset) {
  tw_tensor view;
  TW_RETURN_IF_ERROR(tw::ReadTensor(in, "variable", &view, tw::Place::kHostOrDevice));  // V5
  const tw_tensor *var = &view;
  if (global_shape == nullptr) return Status(TW_INVALID_ARGUMENT, "global_shape is NULL");
  if (offset == nullptr) return Status(TW_INVALID_ARGUMENT, "offset is NULL");
  const size_t ndim = static_cast<size_t>(var->ndim);
  tw::checkpoint::ShardSpec spec{std::vector<int64_t>(global_shape, global_shape + ndim),
                                 std::vector<int64_t>(offset, offset + ndim)};
  const std::vector<int64_t> extent(var->shape, var->shape + ndim);
  TW_RETURN_IF_ERROR(tw::checkpoint::CheckShardSpec(spec, extent, var->name != nullptr ? var->name : ""));
  TW_RETURN_IF_ERROR(AddVariable(in));
  shards[var->name] = std::move(spec);
  return Status();
}
