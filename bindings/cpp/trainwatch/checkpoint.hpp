// trainwatch/checkpoint.hpp — part of the C++ facade (bindings/cpp/trainwatch.hpp, whose comment gives its
// rules): savers (trainwatch/checkpoint.h).
#ifndef TRAINWATCH_HPP_CHECKPOINT_HPP
#define TRAINWATCH_HPP_CHECKPOINT_HPP

#include "session.hpp"

namespace trainwatch {

// ------------------------------------------------------------------------------------------------
// Checkpoints
// ------------------------------------------------------------------------------------------------

// tf.train.Saver over caller-owned variables (borrowed while the saver lives).
class Saver {
 public:
  explicit Saver(const std::vector<Tensor> &variables) {
    const std::vector<tw_tensor> views = detail::c_tensors(variables);
    detail::call([&] { return tw_saver_create(&saver_, views.data(), views.size()); });
  }
  // One rank's saver in a job (tw_saver_create_from_options): the variables, shards, collective and
  // retention of `options`; the variables' data is borrowed while the saver lives.
  explicit Saver(const Options &options) {
    detail::call([&] { return tw_saver_create_from_options(&saver_, options.handle()); });
  }
  Saver(const Saver &) = delete;
  Saver &operator=(const Saver &) = delete;
  ~Saver() { tw_saver_destroy(saver_); }

  // Releases the native saver now, and with it the lock of the directory it saves into (C24): another
  // saver or session may write there at once. Calling it again does nothing; any other call on a closed
  // saver throws Error(TW_FAILED_PRECONDITION). The destructor closes an open saver.
  void close() noexcept {
    tw_saver_destroy(saver_);
    saver_ = nullptr;
  }
  bool closed() const noexcept { return saver_ == nullptr; }

  void set_max_to_keep(int64_t n) {
    tw_saver *saver = open();
    detail::call([&] { return tw_saver_set_max_to_keep(saver, n); });
  }
  void set_keep_checkpoint_every_n_hours(double hours) {
    tw_saver *saver = open();
    detail::call([&] { return tw_saver_set_keep_checkpoint_every_n_hours(saver, hours); });
  }
  void set_pad_step_number(bool pad) {
    tw_saver *saver = open();
    detail::call([&] { return tw_saver_set_pad_step_number(saver, pad ? 1 : 0); });
  }
  // Off by default: see tw_saver_set_recycle_files for the risk it brings.
  void set_recycle_files(bool recycle) {
    tw_saver *saver = open();
    detail::call([&] { return tw_saver_set_recycle_files(saver, recycle ? 1 : 0); });
  }
  // Returns the checkpoint's path ("" for a saver without variables). global_step TW_UNSET: none.
  std::string save(const std::string &prefix, int64_t global_step = detail::unset) {
    tw_saver *saver = open();
    const char *path = nullptr;
    detail::call([&] { return tw_saver_save(&path, saver, prefix.c_str(), global_step); });
    return path != nullptr ? path : "";
  }
  void restore(const std::string &path) {
    tw_saver *saver = open();
    detail::call([&] { return tw_saver_restore(saver, path.c_str()); });
  }
  void restore_variables(const std::string &path, const std::vector<std::string> &names) {
    tw_saver *saver = open();
    std::vector<const char *> c_names;
    for (const std::string &name : names) c_names.push_back(name.c_str());
    detail::call([&] { return tw_saver_restore_variables(saver, path.c_str(), c_names.data(), c_names.size()); });
  }
  // Returns the checkpoint restored.
  std::string restore_newest_good(const std::string &dir) {
    tw_saver *saver = open();
    const char *path = nullptr;
    detail::call([&] { return tw_saver_restore_newest_good(&path, saver, dir.c_str()); });
    return path != nullptr ? path : "";
  }
  void recover_last_checkpoints(const std::string &dir) {
    tw_saver *saver = open();
    detail::call([&] { return tw_saver_recover_last_checkpoints(saver, dir.c_str()); });
  }
  std::vector<std::string> last_checkpoints() const {
    const tw_saver *saver = open();
    return detail::collect<const char *>(tw_saver_last_checkpoint_count(saver), [&](size_t i, const char **path) {
      return tw_saver_last_checkpoint_at(path, saver, i);
    });
  }

 private:
  tw_saver *open() const {
    if (saver_ == nullptr) throw Error(TW_FAILED_PRECONDITION, "this Saver is closed: create a new one");
    return saver_;
  }

  tw_saver *saver_ = nullptr;
};

// tf.train.latest_checkpoint: the newest checkpoint's path, or "" when there is none.
inline std::string latest_checkpoint(const std::string &dir) {
  std::vector<char> path(256);
  for (;;) {
    const tw_status status = tw_latest_checkpoint(path.data(), path.size(), dir.c_str());
    if (status == TW_OK) return path.data();
    if (status == TW_NOT_FOUND) return "";
    if (status != TW_OUT_OF_RANGE) throw Error(status, tw_last_error_message());
    path.resize(path.size() * 4);
  }
}

// The tensors of a checkpoint: names, dtypes and shapes (no data).
inline std::vector<Tensor> list_variables(const std::string &path) {
  tw_checkpoint_variables *list = nullptr;
  detail::call([&] { return tw_checkpoint_list_variables(&list, path.c_str()); });
  std::vector<Tensor> all;
  try {
    all = detail::collect<tw_tensor>(tw_checkpoint_variables_count(list),
                                     [&](size_t i, tw_tensor *t) { return tw_checkpoint_variables_at(t, list, i); });
  } catch (...) {
    tw_checkpoint_variables_destroy(list);
    throw;
  }
  tw_checkpoint_variables_destroy(list);
  return all;
}

// Reads the tensor named destination.name() into destination's (contiguous) buffer.
inline void load_variable(const std::string &path, const Tensor &destination) {
  const tw_tensor t = destination.c_tensor();
  detail::call([&] { return tw_checkpoint_load_variable(path.c_str(), &t); });
}

// Throws Error(TW_DATA_LOSS, …) unless every checksum of the checkpoint matches.
inline void verify_checkpoint(const std::string &path) {
  detail::call([&] { return tw_checkpoint_verify(path.c_str()); });
}

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP_CHECKPOINT_HPP
