// extern "C" shims for trainwatch/checkpoint.h.
#include "trainwatch/checkpoint.h"
#include "trainwatch/distributed.h"

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/progress.h"
#include "base/tensor.h"
#include "base/versioned.h"
#include "capi/guard.h"
#include "checkpoint/open_checkpoint.h"
#include "checkpoint/saver.h"
#include "checkpoint/state_file.h"
#include "checkpoint/upgrade.h"
#include "session/options.h"

using tw::Errorf;
using tw::Status;
using tw::capi::Guard;
namespace ckpt = tw::checkpoint;

struct tw_saver {
  std::unique_ptr<ckpt::Saver> saver;
  std::string path;  // the string handed out by the last call that returned one
};

struct tw_checkpoint_variables {
  std::vector<ckpt::TensorEntry> tensors;
};

namespace {

// A caller's view as a named, contiguous TensorRef; `what` names the argument in messages. A device
// view is accepted: savers and load_variable read and write it through the device layer only
// (checkpoint/device_variables.h).
Status ToTensorRef(const tw_tensor *in, const std::string &what, tw::TensorRef *out) {
  tw_tensor view;
  TW_RETURN_IF_ERROR(tw::ReadTensor(in, what, &view, tw::Place::kHostOrDevice));
  if (view.name == nullptr || view.name[0] == '\0') {
    return Status(TW_INVALID_ARGUMENT, what + " has no name");
  }
  if (!tw::IsContiguous(view)) {
    return Status(TW_INVALID_ARGUMENT, what + " ('" + view.name + "') is strided; checkpoints need contiguous data");
  }
  *out = tw::TensorRef(view, view.name);
  return Status();
}

Status UpdateOptions(tw_saver *saver, const std::function<void(ckpt::SaverOptions *)> &change) {
  TW_CHECK_ARG(saver, "saver");
  ckpt::SaverOptions options = saver->saver->options();
  change(&options);
  return saver->saver->SetOptions(options);
}

}  // namespace

extern "C" {

tw_status tw_saver_create(tw_saver **out, const tw_tensor *variables, size_t n_variables) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    tw::VersionedArray<tw_tensor> views;
    TW_RETURN_IF_ERROR(views.Read(variables, n_variables, "variables"));
    std::vector<tw::TensorRef> refs(n_variables);
    for (size_t i = 0; i < n_variables; ++i) {
      TW_RETURN_IF_ERROR(ToTensorRef(&views.data()[i], "variables[" + std::to_string(i) + "]", &refs[i]));
    }
    std::unique_ptr<tw_saver> saver(new tw_saver());
    TW_RETURN_IF_ERROR(ckpt::Saver::Create(std::move(refs), ckpt::SaverOptions(), &saver->saver));
    *out = saver.release();
    return Status();
  });
}

// Declared in trainwatch/distributed.h: a saver as a session created from `opts` holds one.
tw_status tw_saver_create_from_options(tw_saver **out, const tw_options *opts) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(opts, "opts");
    std::unique_ptr<tw_saver> saver(new tw_saver());
    TW_RETURN_IF_ERROR(tw::CreateSaverOf(*opts, &saver->saver));
    *out = saver.release();
    return Status();
  });
}

void tw_saver_destroy(tw_saver *saver) { delete saver; }

tw_status tw_saver_set_max_to_keep(tw_saver *saver, int64_t max_to_keep) {
  return Guard([&] { return UpdateOptions(saver, [&](ckpt::SaverOptions *o) { o->max_to_keep = max_to_keep; }); });
}

tw_status tw_saver_set_keep_checkpoint_every_n_hours(tw_saver *saver, double hours) {
  return Guard(
      [&] { return UpdateOptions(saver, [&](ckpt::SaverOptions *o) { o->keep_checkpoint_every_n_hours = hours; }); });
}

tw_status tw_saver_set_pad_step_number(tw_saver *saver, int pad) {
  return Guard([&] {
    if (pad != 0 && pad != 1) return Errorf(TW_INVALID_ARGUMENT, "pad must be 0 or 1, got %d", pad);
    return UpdateOptions(saver, [&](ckpt::SaverOptions *o) { o->pad_step_number = pad == 1; });
  });
}

tw_status tw_saver_set_recycle_files(tw_saver *saver, int recycle) {
  return Guard([&] {
    if (recycle != 0 && recycle != 1) return Errorf(TW_INVALID_ARGUMENT, "recycle must be 0 or 1, got %d", recycle);
    return UpdateOptions(saver, [&](ckpt::SaverOptions *o) { o->recycle_files = recycle == 1; });
  });
}

tw_status tw_saver_save(const char **out_path, tw_saver *saver, const char *prefix, int64_t global_step) {
  return Guard([&] {
    TW_CHECK_ARG(saver, "saver");
    TW_CHECK_ARG(prefix, "prefix");
    if (prefix[0] == '\0') return Status(TW_INVALID_ARGUMENT, "prefix is empty");
    std::string path;
    TW_RETURN_IF_ERROR(saver->saver->Save(prefix, global_step, &path));
    saver->path = path;
    if (out_path != nullptr) *out_path = path.empty() ? nullptr : saver->path.c_str();
    return Status();
  });
}

tw_status tw_saver_restore(tw_saver *saver, const char *path) {
  return Guard([&] {
    TW_CHECK_ARG(saver, "saver");
    TW_CHECK_ARG(path, "path");
    return saver->saver->Restore(path);
  });
}

tw_status tw_saver_restore_variables(tw_saver *saver, const char *path, const char *const *names, size_t n_names) {
  return Guard([&] {
    TW_CHECK_ARG(saver, "saver");
    TW_CHECK_ARG(path, "path");
    if (names == nullptr && n_names > 0) return Status(TW_INVALID_ARGUMENT, "names is NULL");
    if (n_names == 0) return Status();  // nothing selected: nothing to do (not "all")
    std::vector<std::string> selected;
    for (size_t i = 0; i < n_names; ++i) {
      if (names[i] == nullptr) return Errorf(TW_INVALID_ARGUMENT, "names[%zu] is NULL", i);
      selected.emplace_back(names[i]);
    }
    return saver->saver->Restore(path, selected);
  });
}

tw_status tw_saver_restore_newest_good(const char **out_path, tw_saver *saver, const char *dir) {
  return Guard([&] {
    TW_CHECK_ARG(saver, "saver");
    TW_CHECK_ARG(dir, "dir");
    std::string path;
    TW_RETURN_IF_ERROR(saver->saver->RestoreNewestGood(dir, &path));
    saver->path = path;
    if (out_path != nullptr) *out_path = saver->path.c_str();
    return Status();
  });
}

tw_status tw_saver_recover_last_checkpoints(tw_saver *saver, const char *dir) {
  return Guard([&] {
    TW_CHECK_ARG(saver, "saver");
    TW_CHECK_ARG(dir, "dir");
    return saver->saver->RecoverLastCheckpoints(dir);
  });
}

size_t tw_saver_last_checkpoint_count(const tw_saver *saver) {
  return saver == nullptr ? 0 : saver->saver->last_checkpoint_count();
}

tw_status tw_saver_last_checkpoint_at(const char **out_path, const tw_saver *saver, size_t index) {
  return Guard([&] {
    TW_CHECK_ARG(out_path, "out_path");
    TW_CHECK_ARG(saver, "saver");
    const std::vector<std::string> kept = saver->saver->last_checkpoints();
    if (index >= kept.size()) {
      return Errorf(TW_OUT_OF_RANGE, "index %zu is past the %zu kept checkpoints", index, kept.size());
    }
    tw_saver *mutable_saver = const_cast<tw_saver *>(saver);  // the returned-string slot only
    mutable_saver->path = kept[index];
    *out_path = mutable_saver->path.c_str();
    return Status();
  });
}

tw_status tw_latest_checkpoint(char *out_path, size_t out_size, const char *dir) {
  return Guard([&] {
    TW_CHECK_ARG(out_path, "out_path");
    TW_CHECK_ARG(dir, "dir");
    std::string path;
    TW_RETURN_IF_ERROR(ckpt::LatestCheckpoint(dir, &path));
    if (path.empty()) return Status(TW_NOT_FOUND, std::string("no checkpoint in ") + dir);
    if (path.size() >= out_size) {
      return Errorf(TW_OUT_OF_RANGE, "out_size %zu is too small: the path needs %zu bytes", out_size, path.size() + 1);
    }
    std::memcpy(out_path, path.c_str(), path.size() + 1);
    return Status();
  });
}

tw_status tw_checkpoint_list_variables(tw_checkpoint_variables **out, const char *path) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(path, "path");
    std::unique_ptr<tw_checkpoint_variables> list(new tw_checkpoint_variables());
    TW_RETURN_IF_ERROR(ckpt::ListVariables(path, &list->tensors));
    *out = list.release();
    return Status();
  });
}

size_t tw_checkpoint_variables_count(const tw_checkpoint_variables *list) {
  return list == nullptr ? 0 : list->tensors.size();
}

tw_status tw_checkpoint_variables_at(tw_tensor *out, const tw_checkpoint_variables *list, size_t index) {
  return Guard([&] {
    TW_CHECK_ARG(list, "list");
    TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
    if (index >= list->tensors.size()) {
      return Errorf(TW_OUT_OF_RANGE, "index %zu is past the %zu tensors", index, list->tensors.size());
    }
    const ckpt::TensorEntry &t = list->tensors[index];
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = t.dtype;
    view.name = t.name.c_str();
    view.ndim = static_cast<int32_t>(t.shape.size());
    view.shape = t.shape.empty() ? nullptr : t.shape.data();
    tw::WriteVersioned(view, out);
    return Status();
  });
}

void tw_checkpoint_variables_destroy(tw_checkpoint_variables *list) { delete list; }

tw_status tw_checkpoint_load_variable(const char *path, const tw_tensor *destination) {
  return Guard([&] {
    TW_CHECK_ARG(path, "path");
    tw::TensorRef ref;
    TW_RETURN_IF_ERROR(ToTensorRef(destination, "destination", &ref));
    return ckpt::LoadVariable(path, ref);
  });
}

tw_status tw_checkpoint_verify(const char *path) {
  return Guard([&] {
    TW_CHECK_ARG(path, "path");
    return ckpt::VerifyCheckpoint(path);  // a sharded checkpoint's index: every part
  });
}

tw_status tw_checkpoint_upgrade(const char *from, const char *to) {
  return Guard([&] {
    TW_CHECK_ARG(from, "from");
    TW_CHECK_ARG(to, "to");
    return ckpt::UpgradeCheckpoint(from, to);
  });
}

tw_status tw_set_progress_sink(double every_n_secs, tw_progress_fn fn, void *user_data) {
  return Guard([&] { return tw::SetProgressSink(every_n_secs, fn, user_data); });
}

}  // extern "C"
