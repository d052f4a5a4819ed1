// Progress of a sharded checkpoint (C26, base/progress.h): each part file's save is one operation reported
// on its own, ending with bytes_done == bytes_total == the part's bytes; a restore through the index is
// one operation over every part it reads, ending with bytes_done == bytes_total == the bytes of the
// chunks it proved (a box's rows round up to whole chunks). Reports every chunk (every_n_secs 0); no
// timing is asserted.
#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/progress.h"
#include "checkpoint/format/format.h"
#include "checkpoint/restore_plan.h"
#include "checkpoint/sharded/shard_index.h"
#include "scratch_dir.h"

extern "C" {
#include <cmocka.h>
}

#include "sharded_rows.h"

namespace ckpt = tw::checkpoint;

namespace {

constexpr int64_t kRows = 64, kCols = 16;  // float32: 64 bytes a row
constexpr uint64_t kRowBytes = kCols * 4;
constexpr uint64_t kChunkBytes = 8 * kRowBytes;  // chunks of 8 rows
constexpr uint32_t kParts = 4;                   // of 16 rows each

struct Report {
  tw_progress_kind kind;
  std::string path;
  int64_t done, total;
  int finished;
};

void Record(void *user_data, tw_progress_kind kind, const char *path, int64_t done, int64_t total, double,
            int finished) {
  static_cast<std::vector<Report> *>(user_data)->push_back({kind, path, done, total, finished});
}

// The reports of `path`, in order: all of `kind`, bytes_done never going back, the last one finished
// with bytes_done == bytes_total == `bytes`, no other finished.
void AssertOperation(const std::vector<Report> &reports, tw_progress_kind kind, const std::string &path,
                     int64_t bytes) {
  std::vector<const Report *> mine;
  for (const Report &r : reports) {
    if (r.path == path) mine.push_back(&r);
  }
  assert_true(mine.size() >= 2);
  for (size_t i = 0; i < mine.size(); ++i) {
    assert_int_equal(mine[i]->kind, kind);
    assert_int_equal(mine[i]->total, bytes);
    if (i > 0) assert_true(mine[i]->done >= mine[i - 1]->done);
    assert_int_equal(mine[i]->finished, i + 1 == mine.size() ? 1 : 0);
  }
  assert_int_equal(mine.back()->done, bytes);
}

tw::Status RestoreRows(const std::string &path, int64_t first, int64_t count, std::vector<uint8_t> *out) {
  std::vector<int64_t> shape = {count, kCols};
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.ndim = 2;
  t.shape = shape.data();
  t.data = out->data();
  const tw::TensorRef variable(t, "t");
  ckpt::ShardSpec spec{{kRows, kCols}, {first, 0}};
  bool misfit = false;
  std::unique_ptr<ckpt::RestorePlan> plan;
  TW_RETURN_IF_ERROR(ckpt::RestorePlan::Open(path, {{&variable, &spec}}, {}, nullptr, &misfit, &plan));
  TW_RETURN_IF_ERROR(plan->Prove());
  return plan->Fill();
}

void EachPartSaveAndTheRestoreAreReported(void **) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  std::vector<uint8_t> global(kRows * kRowBytes);
  for (size_t i = 0; i < global.size(); ++i) global[i] = static_cast<uint8_t>(i % 4 == 3 ? (i / 4) % 64 : i * 31);
  std::vector<Report> reports;
  assert_true(tw::SetProgressSink(0.0, Record, &reports).ok());

  const std::string index = WriteShardedRows(dir.path, "model.ckpt-1", "t", kRows, kCols, kParts, kChunkBytes, &global);
  for (uint32_t part = 0; part < kParts; ++part) {
    const std::string file = std::string(dir.path) + "/" + ckpt::PartFileName("model.ckpt-1", part, kParts);
    AssertOperation(reports, TW_PROGRESS_SAVE, file, static_cast<int64_t>(kRows / kParts * kRowBytes));
  }

  reports.clear();
  std::vector<uint8_t> all(global.size(), 0);
  assert_true(RestoreRows(index, 0, kRows, &all).ok());
  assert_memory_equal(all.data(), global.data(), global.size());
  AssertOperation(reports, TW_PROGRESS_RESTORE, index, static_cast<int64_t>(global.size()));
  assert_int_equal(reports.size() >= kParts + 1, 1);  // every part's chunks, one report each at least

  reports.clear();  // rows 12..19: the second chunk of part 0 and the first of part 1
  std::vector<uint8_t> box(8 * kRowBytes, 0);
  assert_true(RestoreRows(index, 12, 8, &box).ok());
  assert_memory_equal(box.data(), global.data() + 12 * kRowBytes, box.size());
  AssertOperation(reports, TW_PROGRESS_RESTORE, index, static_cast<int64_t>(2 * kChunkBytes));

  assert_true(tw::SetProgressSink(2.0, nullptr, nullptr).ok());
  scratch_dir_destroy(&dir);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(EachPartSaveAndTheRestoreAreReported),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
