// Saver, state file and retention (white-box, tf-semantics C1–C13 and the fixes): naming, TF's state
// file text, max_to_keep, keep_checkpoint_every_n_hours persisted across savers, trim after recovery,
// C4 errors, latest_checkpoint, all-or-nothing restore, fallback to the newest intact checkpoint,
// temporary file cleanup.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/path.h"
#include "checkpoint/saver.h"
#include "checkpoint/snapshot.h"
#include "checkpoint/state_file.h"
#include "scratch_dir.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

// Two variables the savers below save and restore.
struct Model {
  std::vector<float> w = std::vector<float>(12);
  int64_t w_shape[2] = {3, 4};
  std::vector<int32_t> step = std::vector<int32_t>(1);

  std::vector<tw::TensorRef> refs() {
    tw_tensor a = TW_TENSOR_INIT;
    a.dtype = TW_FLOAT32;
    a.ndim = 2;
    a.shape = w_shape;
    a.data = w.data();
    tw_tensor b = TW_TENSOR_INIT;
    b.dtype = TW_INT32;
    b.data = step.data();
    return {tw::TensorRef(a, "w"), tw::TensorRef(b, "global_step")};
  }
  void Fill(float base) {
    for (size_t i = 0; i < w.size(); ++i) w[i] = base + static_cast<float>(i);
    step[0] = static_cast<int32_t>(base);
  }
};

// A view of a float32 vector of shape[0] elements.
tw_tensor Float32Vector(float *data, int64_t *shape) {
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.ndim = 1;
  t.shape = shape;
  t.data = data;
  return t;
}

struct Fixture {
  scratch_dir dir;
  Model model;
  double now = 1000.0;
  std::unique_ptr<ckpt::Saver> saver;

  explicit Fixture(ckpt::SaverOptions options = ckpt::SaverOptions()) {
    assert_int_equal(scratch_dir_create(&dir), 0);
    saver = MakeSaver(options);
  }
  ~Fixture() { scratch_dir_destroy(&dir); }

  std::unique_ptr<ckpt::Saver> MakeSaver(ckpt::SaverOptions options) {
    options.clock = [this] { return now; };
    std::unique_ptr<ckpt::Saver> s;
    assert_true(ckpt::Saver::Create(model.refs(), options, &s).ok());
    return s;
  }
  std::string Path(const std::string &name) const { return std::string(dir.path) + "/" + name; }
  std::string Save(int64_t step) {
    model.Fill(static_cast<float>(step));
    std::string path;
    const tw::Status status = saver->Save(Path("model.ckpt"), step, &path);
    assert_true(status.ok());
    now += 10;
    return path;
  }
  std::string StateText() const {
    std::ifstream in(Path("checkpoint"));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

// Captures log lines.
std::vector<std::string> g_log;
void CaptureLog(void *, tw_log_level level, const char *message) {
  g_log.push_back(std::string(level >= TW_LOG_ERROR ? "E " : level >= TW_LOG_WARNING ? "W " : "I ") + message);
}
bool Logged(const std::string &text) {
  for (const std::string &line : g_log) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

static void checkpoint_names_c1(void **state) {
  (void)state;
  assert_string_equal(ckpt::CheckpointPath("model.ckpt", 1000, false).c_str(), "model.ckpt-1000");
  assert_string_equal(ckpt::CheckpointPath("model.ckpt", 1000, true).c_str(), "model.ckpt-00001000");
  assert_string_equal(ckpt::CheckpointPath("/a/model.ckpt", ckpt::kNoGlobalStep, false).c_str(), "/a/model.ckpt");
}

static void state_file_text_is_tfs_c5(void **state) {
  (void)state;
  Fixture f;
  f.Save(1);
  f.Save(2);
  const std::string newest = f.Save(3);
  assert_string_equal(newest.c_str(), f.Path("model.ckpt-3").c_str());
  // The directory's job identity first, as a comment TF's parser skips (C19; the hidden job file holds
  // the same); absolute prefix → absolute paths (C6); oldest → newest; TF2's timestamp fields after them.
  std::ifstream job_file(f.Path(".trainwatch.job"));
  std::string job;
  assert_true(static_cast<bool>(std::getline(job_file, job)));
  assert_int_equal(job.size(), 32);
  const std::string expected =
      "# trainwatch-job: " + job + "\n" + "model_checkpoint_path: \"" + f.Path("model.ckpt-3") + "\"\n" +
      "all_model_checkpoint_paths: \"" + f.Path("model.ckpt-1") + "\"\n" + "all_model_checkpoint_paths: \"" +
      f.Path("model.ckpt-2") + "\"\n" + "all_model_checkpoint_paths: \"" + f.Path("model.ckpt-3") + "\"\n" +
      "all_model_checkpoint_timestamps: 1000.0\n"
      "all_model_checkpoint_timestamps: 1010.0\n"
      "all_model_checkpoint_timestamps: 1020.0\n"
      "last_preserved_timestamp: 1000.0\n";
  assert_string_equal(f.StateText().c_str(), expected.c_str());
}

static void state_file_parses_tf_text(void **state) {
  (void)state;
  ckpt::CheckpointState s;
  // What TF1's Saver writes (no timestamps), with a comment, single quotes and escapes.
  assert_true(ckpt::ParseCheckpointState("# written by TF\nmodel_checkpoint_path: \"model.ckpt-2\"\n"
                                         "all_model_checkpoint_paths: 'model.ckpt-1'\n"
                                         "all_model_checkpoint_paths: \"mod\\\"el\\303\\251.ckpt-2\"\n",
                                         &s)
                  .ok());
  assert_string_equal(s.model_checkpoint_path.c_str(), "model.ckpt-2");
  assert_int_equal(s.all_model_checkpoint_paths.size(), 2);
  assert_string_equal(s.all_model_checkpoint_paths[1].c_str(), "mod\"el\xc3\xa9.ckpt-2");
  assert_false(s.has_last_preserved_timestamp);
  // Format → parse is the identity, escapes included (protobuf's CEscape: octal for non-ASCII).
  s.all_model_checkpoint_timestamps = {1.5, 2.25};
  s.has_last_preserved_timestamp = true;
  s.last_preserved_timestamp = 1700000000.125;
  const std::string text = ckpt::FormatCheckpointState(s);
  assert_non_null(std::strstr(text.c_str(), "\"mod\\\"el\\303\\251.ckpt-2\""));
  assert_non_null(std::strstr(text.c_str(), "last_preserved_timestamp: 1700000000.125\n"));
  ckpt::CheckpointState back;
  assert_true(ckpt::ParseCheckpointState(text, &back).ok());
  assert_true(back.all_model_checkpoint_paths == s.all_model_checkpoint_paths);
  assert_true(back.all_model_checkpoint_timestamps == s.all_model_checkpoint_timestamps);
  assert_true(back.last_preserved_timestamp == s.last_preserved_timestamp);
  assert_int_equal(ckpt::ParseCheckpointState("bogus_field: 1\n", &back).code(), TW_INVALID_ARGUMENT);
  assert_int_equal(ckpt::ParseCheckpointState("model_checkpoint_path: \"x\n", &back).code(), TW_INVALID_ARGUMENT);
}

static void max_to_keep_deletes_the_oldest_c9_c10(void **state) {
  (void)state;
  ckpt::SaverOptions options;
  options.max_to_keep = 2;
  Fixture f(options);
  for (int step = 1; step <= 4; ++step) f.Save(step);
  assert_false(ckpt::PathExists(f.Path("model.ckpt-1")));
  assert_false(ckpt::PathExists(f.Path("model.ckpt-2")));
  assert_true(ckpt::PathExists(f.Path("model.ckpt-3")));
  assert_true(ckpt::PathExists(f.Path("model.ckpt-4")));
  const std::vector<std::string> kept = f.saver->last_checkpoints();
  assert_int_equal(kept.size(), 2);
  assert_string_equal(kept[0].c_str(), f.Path("model.ckpt-3").c_str());
  assert_null(std::strstr(f.StateText().c_str(), "model.ckpt-2"));
  // Saving the same step again moves it to the newest position instead of listing it twice.
  f.Save(3);
  assert_string_equal(f.saver->last_checkpoints()[1].c_str(), f.Path("model.ckpt-3").c_str());
  assert_int_equal(f.saver->last_checkpoints().size(), 2);
}

static void max_to_keep_zero_keeps_all_lists_newest_c9(void **state) {
  (void)state;
  ckpt::SaverOptions options;
  options.max_to_keep = 0;
  Fixture f(options);
  for (int step = 1; step <= 7; ++step) f.Save(step);
  for (int step = 1; step <= 7; ++step) assert_true(ckpt::PathExists(f.Path("model.ckpt-" + std::to_string(step))));
  const std::string text = f.StateText();
  assert_non_null(
      std::strstr(text.c_str(), ("all_model_checkpoint_paths: \"" + f.Path("model.ckpt-7") + "\"").c_str()));
  assert_null(std::strstr(text.c_str(), "model.ckpt-6"));
}

static void keep_every_n_hours_survives_a_restart_c11_c13(void **state) {
  (void)state;
  ckpt::SaverOptions options;
  options.max_to_keep = 1;
  options.keep_checkpoint_every_n_hours = 1.0;
  Fixture f(options);
  f.now = 0;
  f.saver = f.MakeSaver(options);  // clock starts at t=0
  f.now = 100;
  f.Save(1);
  f.now = 200;
  f.Save(2);  // evicts step 1 (100 s after the clock start): deleted
  assert_false(ckpt::PathExists(f.Path("model.ckpt-1")));

  // A new process at t=5000: TF1 would restart the clock at 5000 (C11); the state file carries 0.
  f.now = 5000;
  f.saver = f.MakeSaver(options);
  assert_true(f.saver->RecoverLastCheckpoints(f.dir.path).ok());
  f.now = 5100;
  f.Save(3);  // evicts step 2 (t=200): less than an hour after 0 → deleted
  assert_false(ckpt::PathExists(f.Path("model.ckpt-2")));
  f.now = 5200;
  f.Save(4);  // evicts step 3 (t=5100): over an hour after the persisted 0 → kept for good
  assert_true(ckpt::PathExists(f.Path("model.ckpt-3")));
  assert_non_null(std::strstr(f.StateText().c_str(), "last_preserved_timestamp: 5100.0\n"));
  assert_null(std::strstr(f.StateText().c_str(), "model.ckpt-3\""));  // preserved files leave the list
}

static void recovery_trims_to_max_to_keep_and_drops_vanished_c12(void **state) {
  (void)state;
  Fixture f;
  for (int step = 1; step <= 5; ++step) f.Save(step);
  ::unlink(f.Path("model.ckpt-5").c_str());  // vanished: dropped from the recovered list
  ckpt::SaverOptions options;
  options.max_to_keep = 2;
  f.saver = f.MakeSaver(options);
  assert_true(f.saver->RecoverLastCheckpoints(f.dir.path).ok());
  const std::vector<std::string> kept = f.saver->last_checkpoints();
  assert_int_equal(kept.size(), 2);  // TF would keep 4 and shrink one per save
  assert_string_equal(kept[0].c_str(), f.Path("model.ckpt-3").c_str());
  assert_string_equal(kept[1].c_str(), f.Path("model.ckpt-4").c_str());
  assert_false(ckpt::PathExists(f.Path("model.ckpt-1")));
  assert_false(ckpt::PathExists(f.Path("model.ckpt-2")));
  const std::string text = f.StateText();
  assert_non_null(std::strstr(text.c_str(), ("model_checkpoint_path: \"" + f.Path("model.ckpt-4") + "\"").c_str()));
  assert_null(std::strstr(text.c_str(), "model.ckpt-2\""));
}

static void recovery_of_a_tf1_state_file_uses_mtimes(void **state) {
  (void)state;
  Fixture f;
  f.Save(1);
  f.Save(2);
  // Rewrite the state as TF1 writes it: relative paths, no timestamps.
  ckpt::CheckpointState s;
  s.model_checkpoint_path = "model.ckpt-2";
  s.all_model_checkpoint_paths = {"model.ckpt-1", "model.ckpt-2"};
  assert_true(ckpt::WriteCheckpointState(f.dir.path, "checkpoint", s).ok());
  f.saver = f.MakeSaver(ckpt::SaverOptions());
  assert_true(f.saver->RecoverLastCheckpoints(f.dir.path).ok());
  assert_int_equal(f.saver->last_checkpoints().size(), 2);
  assert_string_equal(f.saver->last_checkpoints()[0].c_str(), f.Path("model.ckpt-1").c_str());
}

static void save_errors_c4_c6(void **state) {
  (void)state;
  Fixture f;
  std::string path = "unchanged";
  tw::Status status = f.saver->Save(f.Path("missing/model.ckpt"), 1, &path);
  assert_int_equal(status.code(), TW_NOT_FOUND);
  assert_string_equal(
      status.message().c_str(),
      ("Parent directory of " + f.Path("missing/model.ckpt-1") + " doesn't exist, can't save.").c_str());
  assert_string_equal(path.c_str(), "unchanged");
  status = f.saver->Save(f.Path("checkpoint"), ckpt::kNoGlobalStep, &path);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_non_null(std::strstr(status.message().c_str(), "'latest_filename' collides with 'save_path'"));
  ckpt::SaverOptions options;
  options.latest_filename = "sub/checkpoint";
  std::unique_ptr<ckpt::Saver> bad;
  status = ckpt::Saver::Create(f.model.refs(), options, &bad);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_string_equal(status.message().c_str(), "'latest_filename' must not contain path components");
  options = ckpt::SaverOptions();
  options.latest_filename = "model.ckpt-7";
  std::unique_ptr<ckpt::Saver> clash = f.MakeSaver(options);
  status = clash->Save(f.Path("model.ckpt"), 7, &path);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_non_null(std::strstr(status.message().c_str(), "conflicts with path used for checkpoint state.  Please use"));
  options.max_to_keep = -1;
  assert_int_equal(ckpt::Saver::Create(f.model.refs(), options, &bad).code(), TW_INVALID_ARGUMENT);
  // An empty saver saves nothing and says so with an empty path (TF returns None).
  std::unique_ptr<ckpt::Saver> empty;
  assert_true(ckpt::Saver::Create({}, ckpt::SaverOptions(), &empty).ok());
  assert_true(empty->Save(f.Path("model.ckpt"), 1, &path).ok());
  assert_true(path.empty());
  assert_int_equal(scratch_dir_count_entries(&f.dir, ""), 0);
}

static void latest_checkpoint_c7_c8(void **state) {
  (void)state;
  Fixture f;
  std::string latest = "x";
  assert_true(ckpt::LatestCheckpoint(f.dir.path, &latest).ok());  // no state file: none
  assert_true(latest.empty());
  f.Save(1);
  f.Save(2);
  assert_true(ckpt::LatestCheckpoint(f.dir.path, &latest).ok());
  assert_string_equal(latest.c_str(), f.Path("model.ckpt-2").c_str());

  g_log.clear();
  tw::SetLogSink(CaptureLog, nullptr);
  ::unlink(f.Path("model.ckpt-2").c_str());  // dangling entry: none, with TF's ERROR line
  assert_true(ckpt::LatestCheckpoint(f.dir.path, &latest).ok());
  assert_true(latest.empty());
  assert_true(Logged("E Couldn't match files for checkpoint " + f.Path("model.ckpt-2")));

  std::ofstream(f.Path("checkpoint")) << "this is not a state file\n";  // unparsable: two warnings
  assert_true(ckpt::LatestCheckpoint(f.dir.path, &latest).ok());
  assert_true(latest.empty());
  assert_true(Logged("W ParseError: "));
  assert_true(Logged("W " + f.Path("checkpoint") + ": Checkpoint ignored"));

  std::ofstream(f.Path("checkpoint")) << "all_model_checkpoint_paths: \"model.ckpt-1\"\n";  // empty model path
  const tw::Status status = ckpt::LatestCheckpoint(f.dir.path, &latest);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_string_equal(status.message().c_str(),
                      (std::string("Invalid checkpoint state loaded from ") + f.dir.path).c_str());

  std::ofstream(f.Path("checkpoint")) << "model_checkpoint_path: \"model.ckpt-1\"\n";  // relative: joined
  assert_true(ckpt::LatestCheckpoint(f.dir.path, &latest).ok());
  assert_string_equal(latest.c_str(), f.Path("model.ckpt-1").c_str());
  tw::SetLogSink(nullptr, nullptr);
}

static void restore_all_some_and_nothing_half_written(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1);
  f.Save(2);
  f.model.Fill(99);
  assert_true(f.saver->Restore(first).ok());
  assert_true(f.model.w[5] == 6.0f);
  assert_int_equal(f.model.step[0], 1);

  f.model.Fill(99);
  assert_true(f.saver->Restore(first, {"global_step"}).ok());  // a subset: w untouched
  assert_int_equal(f.model.step[0], 1);
  assert_true(f.model.w[0] == 99.0f);
  assert_int_equal(f.saver->Restore(first, {"nope"}).code(), TW_NOT_FOUND);

  // A saver whose "w" has another shape: a clear error naming it, and global_step (checked first in
  // no particular order) is not written either.
  Model other;
  other.w_shape[0] = 4;
  other.w_shape[1] = 3;
  other.Fill(42);
  std::unique_ptr<ckpt::Saver> mismatched;
  assert_true(ckpt::Saver::Create({other.refs()[1], other.refs()[0]}, ckpt::SaverOptions(), &mismatched).ok());
  tw::Status status = mismatched->Restore(first);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_non_null(std::strstr(status.message().c_str(), "variable 'w' is float32[4,3] but checkpoint"));
  assert_non_null(std::strstr(status.message().c_str(), "holds float32[3,4]"));
  assert_int_equal(other.step[0], 42);

  // A variable missing from the checkpoint: TF's message; nothing written.
  std::vector<float> extra(2, 7.0f);
  int64_t extra_shape[1] = {2};
  const tw_tensor e = Float32Vector(extra.data(), extra_shape);
  std::vector<tw::TensorRef> refs = other.refs();
  refs[0] = f.model.refs()[0];
  refs.emplace_back(e, "extra");
  std::unique_ptr<ckpt::Saver> wider;
  assert_true(ckpt::Saver::Create(refs, ckpt::SaverOptions(), &wider).ok());
  f.model.Fill(99);
  status = wider->Restore(first);
  assert_int_equal(status.code(), TW_NOT_FOUND);
  assert_string_equal(status.message().c_str(), ("Key extra not found in checkpoint " + first).c_str());
  assert_true(f.model.w[0] == 99.0f);
}

// A listed checkpoint lacking a variable (a model grown since) is the caller's to fix, as TF's
// NotFoundError: skipping it, and every older one, would start afresh and let retention delete the
// checkpoints of the model as it was. One found only by name is skipped: it may be another model's.
static void restore_newest_good_refuses_a_listed_checkpoint_lacking_a_variable(void **state) {
  (void)state;
  Fixture f;
  f.Save(1);
  const std::string newest = f.Save(2);
  std::vector<float> extra(2, 7.0f);
  int64_t extra_shape[1] = {2};
  const tw_tensor e = Float32Vector(extra.data(), extra_shape);
  std::vector<tw::TensorRef> refs = f.model.refs();
  refs.emplace_back(e, "extra");
  std::unique_ptr<ckpt::Saver> grown;
  assert_true(ckpt::Saver::Create(refs, ckpt::SaverOptions(), &grown).ok());
  f.model.Fill(99);
  std::string restored;
  tw::Status status = grown->RestoreNewestGood(f.dir.path, &restored);
  assert_int_equal(status.code(), TW_NOT_FOUND);
  assert_string_equal(status.message().c_str(), ("Key extra not found in checkpoint " + newest).c_str());
  assert_true(f.model.w[0] == 99.0f && extra[0] == 7.0f);
  // Without the state file both are found by name only: skipped, and none is left.
  ::unlink(f.Path("checkpoint").c_str());
  g_log.clear();
  tw::SetLogSink(CaptureLog, nullptr);
  status = grown->RestoreNewestGood(f.dir.path, &restored);
  tw::SetLogSink(nullptr, nullptr);
  assert_int_equal(status.code(), TW_NOT_FOUND);
  assert_non_null(std::strstr(status.message().c_str(), "no intact checkpoint"));
  assert_true(Logged("W Skipping checkpoint " + newest + ": Key extra not found"));
  assert_true(f.model.w[0] == 99.0f);
}

static void restore_newest_good_skips_a_corrupt_checkpoint(void **state) {
  (void)state;
  Fixture f;
  f.Save(1);
  f.Save(2);
  const std::string newest = f.Save(3);
  {  // flip one byte in the chunk data of the newest checkpoint
    std::fstream file(newest, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(20);
    char c = 0;
    file.read(&c, 1);
    c ^= 0x10;
    file.seekp(20);
    file.write(&c, 1);
  }
  g_log.clear();
  tw::SetLogSink(CaptureLog, nullptr);
  f.model.Fill(99);
  std::string restored;
  assert_true(f.saver->RestoreNewestGood(f.dir.path, &restored).ok());
  tw::SetLogSink(nullptr, nullptr);
  assert_string_equal(restored.c_str(), f.Path("model.ckpt-2").c_str());
  assert_int_equal(f.model.step[0], 2);
  assert_true(Logged("W Skipping checkpoint " + newest));
  assert_true(Logged("checksum mismatch"));
  // C20: the only one left is damaged: TW_DATA_LOSS naming it and its damage, never "nothing to
  // restore" (a caller would start over on top of it).
  ::unlink(f.Path("model.ckpt-1").c_str());
  ::unlink(f.Path("model.ckpt-2").c_str());
  tw::SetLogSink(CaptureLog, nullptr);
  tw::Status status = f.saver->RestoreNewestGood(f.dir.path, &restored);
  tw::SetLogSink(nullptr, nullptr);
  assert_int_equal(status.code(), TW_DATA_LOSS);
  assert_non_null(std::strstr(status.message().c_str(), (newest + ": ").c_str()));
  assert_non_null(std::strstr(status.message().c_str(), "checksum mismatch"));
  assert_non_null(std::strstr(status.message().c_str(), "move them out of"));
  // Nothing there at all: TW_NOT_FOUND, with no path.
  ::unlink(newest.c_str());
  tw::SetLogSink(CaptureLog, nullptr);
  status = f.saver->RestoreNewestGood(f.dir.path, &restored);
  tw::SetLogSink(nullptr, nullptr);
  assert_int_equal(status.code(), TW_NOT_FOUND);
  assert_true(restored.empty());
}

// The storage of a deleted or replaced checkpoint is freed on a background thread (background_close.h):
// its name must still be gone when the save returns, and a save over an existing path must replace it.
static void deleted_and_replaced_checkpoints_are_gone_at_return(void **state) {
  (void)state;
  ckpt::SaverOptions options;
  options.max_to_keep = 1;
  Fixture f(options);
  for (int64_t step = 1; step <= 4; ++step) {
    f.Save(step);
    assert_true(ckpt::PathExists(f.Path("model.ckpt-" + std::to_string(step))));
    if (step > 1) assert_false(ckpt::PathExists(f.Path("model.ckpt-" + std::to_string(step - 1))));
  }
  std::string path;
  for (float base : {10.0f, 20.0f}) {  // the same path twice: the rename replaces the first file
    f.model.Fill(base);
    assert_true(f.saver->Save(f.Path("fixed.ckpt"), ckpt::kNoGlobalStep, &path).ok());
  }
  f.model.Fill(0);
  assert_true(f.saver->Restore(path).ok());
  assert_true(f.model.w[1] == 21.0f);
  // Nothing else is left in the directory: no temporary file, no stray checkpoint.
  int entries = 0;
  DIR *d = opendir(f.dir.path);
  assert_non_null(d);
  while (const struct dirent *e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    ++entries;
    assert_true(name == "model.ckpt-4" || name == "fixed.ckpt" || name == "checkpoint" || name == ".trainwatch.lock" ||
                name == ".trainwatch.job");
  }
  closedir(d);
  assert_true(entries >= 2);
}

static void stale_temporary_files_are_removed_at_startup(void **state) {
  (void)state;
  Fixture f;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a pid that is certainly gone
  const std::string dead = f.Path(".model.ckpt-5.tw-tmp-" + std::to_string(child) + "-0");
  const std::string live = f.Path(".model.ckpt-6.tw-tmp-" + std::to_string(::getpid()) + "-3");
  const std::string other = f.Path(".model.ckpt-7.tmp");
  for (const std::string &p : {dead, live, other}) std::ofstream(p) << "partial";
  assert_true(ckpt::IsTemporaryFileName(ckpt::Basename(dead)));
  assert_false(ckpt::IsTemporaryFileName(ckpt::Basename(other)));
  f.Save(1);
  assert_false(ckpt::PathExists(dead));
  assert_true(ckpt::PathExists(live));   // this process may still be writing it
  assert_true(ckpt::PathExists(other));  // not ours
}

static void snapshot_then_write_saves_the_captured_values(void **state) {
  (void)state;
  Fixture f;
  f.model.Fill(5);
  ckpt::Snapshot snapshot;
  assert_true(f.saver->Capture(&snapshot).ok());  // the async saver's stall: a copy
  assert_int_equal(snapshot.byte_size(), 12 * 4 + 4);
  f.model.Fill(6);  // training goes on while the snapshot is written
  std::string path;
  assert_true(f.saver->WriteSnapshot(snapshot, f.Path("model.ckpt"), 5, &path).ok());
  assert_true(f.saver->Capture(&snapshot).ok());  // buffers reused
  f.model.Fill(99);
  assert_true(f.saver->Restore(path).ok());
  assert_int_equal(f.model.step[0], 5);
  assert_true(f.model.w[11] == 16.0f);
  assert_true(f.saver->WriteSnapshot(snapshot, f.Path("model.ckpt"), 6, &path).ok());
  assert_true(f.saver->Restore(path).ok());
  assert_int_equal(f.model.step[0], 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(checkpoint_names_c1),
      cmocka_unit_test(state_file_text_is_tfs_c5),
      cmocka_unit_test(state_file_parses_tf_text),
      cmocka_unit_test(max_to_keep_deletes_the_oldest_c9_c10),
      cmocka_unit_test(max_to_keep_zero_keeps_all_lists_newest_c9),
      cmocka_unit_test(keep_every_n_hours_survives_a_restart_c11_c13),
      cmocka_unit_test(recovery_trims_to_max_to_keep_and_drops_vanished_c12),
      cmocka_unit_test(recovery_of_a_tf1_state_file_uses_mtimes),
      cmocka_unit_test(save_errors_c4_c6),
      cmocka_unit_test(latest_checkpoint_c7_c8),
      cmocka_unit_test(restore_all_some_and_nothing_half_written),
      cmocka_unit_test(restore_newest_good_refuses_a_listed_checkpoint_lacking_a_variable),
      cmocka_unit_test(restore_newest_good_skips_a_corrupt_checkpoint),
      cmocka_unit_test(deleted_and_replaced_checkpoints_are_gone_at_return),
      cmocka_unit_test(stale_temporary_files_are_removed_at_startup),
      cmocka_unit_test(snapshot_then_write_saves_the_captured_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
