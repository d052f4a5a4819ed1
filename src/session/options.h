// Session options: a table of typed keys with defaults (so adding an option never changes a struct),
// the recoverable-status set, registered variables and the scaffold's callbacks.
#ifndef TRAINWATCH_SESSION_OPTIONS_H
#define TRAINWATCH_SESSION_OPTIONS_H

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/saver.h"
#include "checkpoint/sharded/shard_index.h"
#include "distributed/collective.h"
#include "trainwatch/session.h"

namespace tw {

// A C callback with its user_data; destroy(user_data) runs once, when the last owner lets go.
template <typename Fn>
struct UserCallback {
  Fn fn = nullptr;
  void *user_data = nullptr;
  void (*destroy)(void *) = nullptr;
  UserCallback(Fn f, void *u, void (*d)(void *)) : fn(f), user_data(u), destroy(d) {}
  UserCallback(const UserCallback &) = delete;
  UserCallback &operator=(const UserCallback &) = delete;
  ~UserCallback() {
    if (destroy != nullptr) destroy(user_data);
  }
};

enum class OptionType { kInt64, kDouble, kString };

// A key as a C caller passed it, checked by its bits (base/enum_bits.h) before it is ever used as a
// tw_option: TW_INVALID_ARGUMENT "unknown option key <n>" for a negative or unlisted key.
// tw_option_info of `key` / of the option named `name` (its TW_OPT_ name, or the part after TW_OPT_, in
// any case): TW_NOT_FOUND naming it when there is none.
Status DescribeOption(const tw_option &key, tw_option_info *out);
Status DescribeOptionNamed(const char *name, tw_option_info *out);
Status CheckOptionKey(const tw_option &key);

}  // namespace tw

struct tw_options {
  tw_options();

  tw::Status SetInt64(tw_option key, int64_t value);
  tw::Status SetDouble(tw_option key, double value);
  tw::Status SetString(tw_option key, const char *value);
  tw::Status SetNone(tw_option key);
  tw::Status GetState(tw_option key, tw_option_state *out) const;
  tw_option_state State(tw_option key) const;
  bool IsSet(tw_option key) const { return State(key) == TW_OPTION_SET; }
  tw::Status GetInt64(tw_option key, int64_t *out) const;
  tw::Status GetDouble(tw_option key, double *out) const;
  tw::Status GetString(tw_option key, const char **out) const;

  // Unchecked reads for the library's own use; `key` must be of that type.
  int64_t Int64(tw_option key) const { return ints.at(key); }
  double Double(tw_option key) const { return doubles.at(key); }
  const std::string *String(tw_option key) const;  // nullptr when unset

  tw::Status SetRecoverable(tw_status status, bool recoverable);
  tw::Status AddVariable(const tw_tensor *var);
  // A variable holding one box of a global tensor sharded across ranks (trainwatch/distributed.h).
  tw::Status AddShard(const tw_tensor *var, const int64_t *global_shape, const int64_t *offset);
  // Keeps `failure` in `registration` unless one is kept already; returns it. The C entry points pass
  // every registration's outcome through it (sticky, as tw_options_add_variable documents), and
  // tw_options_record_error a binding's own failure.
  tw::Status RecordError(const tw::Status &failure);

  std::map<tw_option, int64_t> ints;
  std::map<tw_option, double> doubles;
  std::map<tw_option, std::string> strings;     // absent = unset
  std::map<tw_option, tw_option_state> states;  // absent = TW_OPTION_DEFAULT
  std::set<tw_status> recoverable;
  std::vector<tw::TensorRef> variables;
  std::map<std::string, tw::checkpoint::ShardSpec> shards;  // by variable name; absent: replicated
  tw::Status registration;  // the first failed registration (RecordError); OK when none failed
  std::shared_ptr<tw::UserCallback<tw_init_fn>> init_fn;
  std::shared_ptr<tw::UserCallback<tw_ready_fn>> ready_fn;
  std::shared_ptr<const tw::Collective> collective;  // nullptr: a single process
};

namespace tw {
using Options = ::tw_options;

// Every option at its default: what a NULL options argument means.
const Options &DefaultOptions();

// TW_OPT_IS_CHIEF; left at its default in a job with a collective, rank 0 is the chief (D11).
bool IsChief(const Options &options);

// A job with a collective and sharded variables: every rank writes its part of each checkpoint, so
// every rank saves, synchronously (trainwatch/distributed.h, point 6).
bool IsShardedJob(const Options &options);

// What a saver of a session created from `options` follows: retention, the collective, the shards, the
// chief, the collective's timeout (the session's own saver and tw_saver_create_from_options).
checkpoint::SaverOptions SaverOptionsOf(const Options &options);

// tw_saver_create_from_options: a saver over the options' variables with SaverOptionsOf. With a
// collective, one round on every rank first (a failure slot, D1/D17): a rank whose registration failed
// (options.registration) makes every rank's creation fail with "rank R of N: <its reason>".
Status CreateSaverOf(const Options &options, std::unique_ptr<checkpoint::Saver> *out);
}  // namespace tw

#endif  // TRAINWATCH_SESSION_OPTIONS_H
