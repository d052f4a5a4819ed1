// A restore that runs out of memory writes nothing (C21): every allocation of a restore (of a single
// file, and of a shard from a sharded checkpoint's parts) and of load_variable is made to fail in turn
// (failing_allocator.h: the k-th allocation after the call starts, k = 1, 2, … until one runs through without reaching
// its k-th), with 4 threads. Each call either fails with TW_RESOURCE_EXHAUSTED and leaves every variable byte as it
// was, or succeeds (a thread that could not be started only slows it down) with exactly the saved values. Failed
// allocations are turned into a status as every C entry point does (capi/guard.h).
#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/open_checkpoint.h"
#include "checkpoint/restore_plan.h"
#include "checkpoint/saver.h"
#include "failing_allocator.h"
#include "restore_model.h"
#include "scratch_dir.h"

extern "C" {
#include <cmocka.h>
}

#include "sharded_rows.h"

namespace ckpt = tw::checkpoint;

namespace {

// What an entry point's guard makes of an escaping std::bad_alloc.
template <typename Call>
tw::Status Guarded(Call call) {
  try {
    return call();
  } catch (const std::bad_alloc &) {
    return tw::Status(TW_RESOURCE_EXHAUSTED, "out of memory");
  }
}

// Runs `call` with the k-th allocation failing for k = 1, 2, …; after each, `check(status)`. Returns
// how many calls failed.
template <typename Call, typename Check>
int EveryAllocationFailing(Call call, Check check) {
  int failed = 0;
  for (long k = 1; k < 100000; ++k) {
    failing_allocator::Arm(k);
    const tw::Status status = Guarded(call);
    failing_allocator::Disarm();
    check(status);
    failed += !status.ok();
    if (!failing_allocator::Fired()) return failed;  // ran through: every allocation point was hit
  }
  fail_msg("the call never ran through");
  return failed;
}

// RestoreModel saved once (chunks of 4 KiB, `threads` writers: 0 for the default) into a scratch
// directory, then set to its sentinel: `saved` and `sentinel` are its bytes before and after.
struct SavedModel {
  scratch_dir dir;
  RestoreModel model;
  std::unique_ptr<ckpt::Saver> saver;
  std::string path;
  std::vector<uint8_t> saved, sentinel;

  explicit SavedModel(int threads) {
    assert_int_equal(scratch_dir_create(&dir), 0);
    ckpt::SaverOptions options;
    options.write.chunk_bytes = 4096;
    options.write.threads = threads;
    assert_true(ckpt::Saver::Create(model.refs(), options, &saver).ok());
    model.Fill(1);
    assert_true(saver->Save(std::string(dir.path) + "/model.ckpt", 1, &path).ok());
    saved = model.Bytes();
    model.Sentinel();
    sentinel = model.Bytes();
  }
  ~SavedModel() { scratch_dir_destroy(&dir); }
};

void restore_writes_nothing_when_any_allocation_fails(void **) {
  SavedModel m(4);
  RestoreModel &model = m.model;
  const std::string &path = m.path;
  const std::vector<uint8_t> &saved = m.saved, &sentinel = m.sentinel;
  ckpt::Saver *saver = m.saver.get();

  const int failed = EveryAllocationFailing([&] { return saver->Restore(path); },
                                            [&](const tw::Status &status) {
                                              if (status.ok()) {
                                                assert_true(model.Bytes() == saved);
                                                model.Sentinel();
                                              } else {
                                                if (status.code() != TW_RESOURCE_EXHAUSTED)
                                                  fail_msg("%s", status.message().c_str());
                                                assert_true(model.Bytes() == sentinel);  // not a byte written
                                              }
                                            });
  print_message("# %d of the restore's allocation points failed it\n", failed);
  assert_true(failed > 10);
}

void load_variable_writes_nothing_when_any_allocation_fails(void **) {
  SavedModel m(0);
  RestoreModel &model = m.model;
  const std::string &path = m.path;
  const std::vector<uint8_t> &saved = m.saved, &sentinel = m.sentinel;
  const tw::TensorRef b = model.refs()[1];

  const int failed =
      EveryAllocationFailing([&] { return ckpt::LoadVariable(path, b); },
                             [&](const tw::Status &status) {
                               if (status.ok()) {
                                 assert_memory_equal(model.b.data(), saved.data() + 4096 * 4, model.b.size() * 4);
                                 model.Sentinel();
                               } else {
                                 if (status.code() != TW_RESOURCE_EXHAUSTED) {
                                   fail_msg("%s", status.message().c_str());
                                 }
                                 assert_true(model.Bytes() == sentinel);
                               }
                             });
  assert_true(failed > 5);
}

// A shard of a sharded checkpoint whose box spans both parts and cuts chunks and columns: chunks of two
// files, a chunk decoded into scratch for its overlap, rows read aside and copied into the box.
void sharded_restore_writes_nothing_when_any_allocation_fails(void **) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  constexpr int64_t kRows = 64, kCols = 64;  // 256 bytes a row, 4 rows a chunk, 2 parts of 32 rows
  std::vector<uint8_t> global(kRows * kCols * 4);
  uint32_t x = 1;
  for (size_t i = 0; i < global.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    global[i] = static_cast<uint8_t>(i % 4 == 3 ? (x >> 24) & 0x3F : x >> 24);  // finite floats
  }
  const std::string path = WriteShardedRows(dir.path, "model.ckpt-1", "t", kRows, kCols, 2, 1024, &global);
  const int64_t first_row = 22, rows = 24, first_col = 8, cols = 32;
  std::vector<uint8_t> expected;
  for (int64_t r = first_row; r < first_row + rows; ++r) {
    const uint8_t *row = global.data() + (r * kCols + first_col) * 4;
    expected.insert(expected.end(), row, row + cols * 4);
  }
  std::vector<uint8_t> box(expected.size(), 0xA5);
  const std::vector<uint8_t> sentinel = box;
  std::vector<int64_t> shape = {rows, cols};
  tw_tensor view = TW_TENSOR_INIT;
  view.dtype = TW_FLOAT32;
  view.ndim = 2;
  view.shape = shape.data();
  view.data = box.data();
  const tw::TensorRef variable(view, "t");
  const ckpt::ShardSpec spec{{kRows, kCols}, {first_row, first_col}};

  const int failed = EveryAllocationFailing(
      [&] {
        std::unique_ptr<ckpt::RestorePlan> plan;
        bool intact = false;
        TW_RETURN_IF_ERROR(ckpt::RestorePlan::Open(path, {{&variable, &spec}}, {}, nullptr, &intact, &plan));
        TW_RETURN_IF_ERROR(plan->Prove(4));
        return plan->Fill();
      },
      [&](const tw::Status &status) {
        if (status.ok()) {
          assert_true(box == expected);
          box = sentinel;
        } else {
          if (status.code() != TW_RESOURCE_EXHAUSTED) fail_msg("%s", status.message().c_str());
          assert_true(box == sentinel);
        }
      });
  assert_true(failed > 10);
  scratch_dir_destroy(&dir);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(restore_writes_nothing_when_any_allocation_fails),
      cmocka_unit_test(load_variable_writes_nothing_when_any_allocation_fails),
      cmocka_unit_test(sharded_restore_writes_nothing_when_any_allocation_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
