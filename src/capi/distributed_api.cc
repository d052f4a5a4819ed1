// extern "C" shims for trainwatch/distributed.h.
#include <memory>

#include "capi/guard.h"
#include "distributed/collective.h"
#include "session/options.h"

using tw::Status;
using tw::capi::Guard;

extern "C" {

tw_status tw_options_set_collective(tw_options *opts, const tw_collective *collective, void *user_data) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    if (collective == nullptr) {
      opts->collective.reset();
      return Status();
    }
    std::unique_ptr<tw::Collective> created;
    TW_RETURN_IF_ERROR(tw::Collective::Create(collective, user_data, &created));
    opts->collective = std::move(created);
    return Status();
  });
}

tw_status tw_options_add_shard(tw_options *opts, const tw_tensor *var, const int64_t *global_shape,
                               const int64_t *offset) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    return opts->RecordError(opts->AddShard(var, global_shape, offset));
  });
}

}  // extern "C"
