#include "hooks/final_ops_hook.h"

#include "device/transfer.h"

#include "base/log.h"
#include "session/run_context.h"
#include "session/session.h"

namespace tw {
namespace {

class FinalOpsHook final : public Hook {
 public:
  explicit FinalOpsHook(FinalOpsConfig config) : Hook("FinalOpsHook"), config_(std::move(config)) {}

  const FinalOpsValues &values() const { return values_; }

  Status Begin(Session &) override {
    values_ = FinalOpsValues();
    return Status();
  }

  // B43: run the final step with its feeds; an end of input there means the final step reads the
  // input pipeline, which TF warns about before passing the status on.
  Status End(Session &session) override {
    values_ = FinalOpsValues();
    std::vector<tw_tensor> feeds(config_.feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) {
      feeds[i] = TW_TENSOR_INIT;
      config_.feeds[i].FillView(&feeds[i]);
    }
    const Status status = session.Run(feeds.data(), feeds.size(), &FinalOpsHook::Trampoline, this, false);
    if (status.code() == TW_OUT_OF_RANGE || status.code() == TW_STOP_ITERATION) {
      Log(TW_LOG_WARNING,
          "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. This typically "
          "means the Ops running by the FinalOpsHook have a dependency back to some input source, which should "
          "not happen. For example, for metrics in tf.estimator.Estimator, all metrics functions return two Ops: "
          "`value_op` and  `update_op`. Estimator.evaluate calls the `update_op` for each batch of the data in "
          "input source and, once it is exhausted, it call the `value_op` to get the metric values. The "
          "`value_op` here should have dependency back to variables reading only, rather than reading another "
          "batch from input. Otherwise, the `value_op`, executed by `FinalOpsHook`, triggers another data "
          "reading, which ends OutOfRangeError/StopIteration. Please fix that.");
    }
    return status;
  }

 private:
  // Runs the user's final step and copies what it published before the step context is reused.
  static tw_status Trampoline(void *self, tw_step_context *ctx) {
    FinalOpsHook &hook = *static_cast<FinalOpsHook *>(self);
    const UserCallback<tw_step_fn> &step = *hook.config_.final_step;
    const tw_status code = step.fn(step.user_data, ctx);
    if (code != TW_OK) return code;
    hook.values_.values.resize(ctx->outputs.size());
    for (size_t i = 0; i < ctx->outputs.size(); ++i) {
      tw_tensor view = TW_TENSOR_INIT;
      ctx->outputs[i].FillView(&view);
      device::HostCopy host;  // V4: a device value is kept as a host copy
      if (IsOnDevice(view)) {
        const Status copied = device::HostCopy::Make(view, &host);
        if (!copied.ok()) {
          SetThreadErrorMessage(copied.message());
          return copied.code();
        }
        view = host.view();
      }
      hook.values_.values[i].Assign(view, view.name);
    }
    hook.values_.ran = true;
    return TW_OK;
  }

  FinalOpsConfig config_;
  FinalOpsValues values_;
};

}  // namespace

Status NewFinalOpsHook(FinalOpsConfig config, Hook **out) {
  if (config.final_step == nullptr || config.final_step->fn == nullptr) {
    return Status(TW_INVALID_ARGUMENT, "final_step is NULL");
  }
  *out = new FinalOpsHook(std::move(config));
  return Status();
}

const FinalOpsValues *FinalOpsValuesOf(const Hook *hook) {
  const FinalOpsHook *final_ops = dynamic_cast<const FinalOpsHook *>(hook);
  return final_ops != nullptr ? &final_ops->values() : nullptr;
}

}  // namespace tw
