// Threads of the ranks of a job that share a machine (white-box): each takes its share of the cores,
// learned from the machine ids gathered when the ranks agree on their shards, or from the launcher.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/io/parallel.h"
#include "checkpoint/sharded/sharded_save.h"
#include "distributed/collective.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

void SharesOfTheCores(void **) {
  assert_int_equal(ckpt::ThreadsPerRank(2, 2, 4), 1);  // bench_sharded: 4 ranks on 2 cores, 1 thread each
  assert_int_equal(ckpt::ThreadsPerRank(2, 2, 2), 1);
  assert_int_equal(ckpt::ThreadsPerRank(2, 2, 1), 2);  // alone: every core
  assert_int_equal(ckpt::ThreadsPerRank(8, 8, 3), 2);  // rounded down, no core shared by two ranks' threads
  assert_int_equal(ckpt::ThreadsPerRank(16, 16, 4), 4);
  assert_int_equal(ckpt::ThreadsPerRank(2, 8, 4), 2);       // pinned by the launcher to 2 of 8: both kept
  assert_int_equal(ckpt::ThreadsPerRank(1, 8, 2), 1);       // pinned to one core: never more
  assert_int_equal(ckpt::ThreadsPerRank(4, 2, 1), 4);       // a machine count below the affinity's: the affinity
  assert_int_equal(ckpt::ThreadsPerRank(0, 0, 0), 1);       // nothing known: one thread
  assert_int_equal(ckpt::ThreadsPerRank(256, 256, 1), 64);  // DefaultThreadCount's cap
}

void LauncherVariables(void **) {
  const char *names[] = {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
  for (const char *name : names) unsetenv(name);
  assert_int_equal(ckpt::LocalRanksFromEnvironment(), 0);
  for (const char *name : names) {
    setenv(name, "3", 1);
    assert_int_equal(ckpt::LocalRanksFromEnvironment(), 3);
    for (const char *bad : {"", "0", "-2", "4x", "x"}) {  // not a count: as if unset
      setenv(name, bad, 1);
      assert_int_equal(ckpt::LocalRanksFromEnvironment(), 0);
    }
    unsetenv(name);
  }
  setenv("LOCAL_WORLD_SIZE", "2", 1);  // torchrun's first
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "5", 1);
  assert_int_equal(ckpt::LocalRanksFromEnvironment(), 2);
  for (const char *name : names) unsetenv(name);
}

void ThisProcess(void **) {
  assert_int_equal(ckpt::ThreadsForLocalRanks(0), ckpt::DefaultThreadCount());  // unknown: as before
  assert_in_range(ckpt::ThreadsForLocalRanks(1), 1, ckpt::DefaultThreadCount());
  assert_int_equal(ckpt::ThreadsForLocalRanks(1 << 20), 1);
  const int64_t id = ckpt::MachineId();
  assert_true(id > 0);
  assert_true(id < (int64_t{1} << 62));
  assert_int_equal(ckpt::MachineId(), id);
}

// Rank 0 (the chief) of a world of 4, the other ranks simulated: ranks 1 and 2 report this machine's
// id, rank 3 another machine's. Each holds 2 rows of "w" [8].
constexpr int32_t kWorld = 4;

tw_status FakeAllreduce(void *, int64_t *values, size_t count, tw_reduce_op op, double) {
  if (op == TW_REDUCE_MAX) return TW_OK;  // the agreement: the others declare exactly as rank 0
  if (op != TW_REDUCE_SUM || count % kWorld != 0) return TW_INTERNAL;
  const size_t slot = count / kWorld;  // machine id, then offset and extent of "w"
  for (int32_t r = 1; r < kWorld; ++r) {
    int64_t *theirs = values + r * slot;
    theirs[0] = ckpt::MachineId() + (r == 3 ? 1 : 0);
    theirs[1] = 2 * r;
    theirs[2] = 2;
  }
  return TW_OK;
}
tw_status FakeBroadcast(void *, void *, size_t, int32_t, double) { return TW_INTERNAL; }
tw_status FakeBarrier(void *, double) { return TW_INTERNAL; }

void LayoutCountsRanksOfThisMachine(void **) {
  tw_collective table = TW_COLLECTIVE_INIT;
  table.rank = 0;
  table.world_size = kWorld;
  table.allreduce_int64 = FakeAllreduce;
  table.broadcast = FakeBroadcast;
  table.barrier = FakeBarrier;
  std::unique_ptr<tw::Collective> collective;
  assert_int_equal(tw::Collective::Create(&table, nullptr, &collective).code(), TW_OK);

  float rows[2] = {1, 2};
  const int64_t extent[1] = {2};
  tw_tensor w = TW_TENSOR_INIT;
  w.dtype = TW_FLOAT32;
  w.ndim = 1;
  w.shape = extent;
  w.data = rows;
  const std::vector<tw::TensorRef> variables = {tw::TensorRef(w, "w")};
  const std::map<std::string, ckpt::ShardSpec> shards = {{"w", ckpt::ShardSpec{{8}, {0}}}};
  ckpt::ShardLayout layout;
  int64_t prepared = TW_OK;
  const tw::Status agreed = ckpt::AgreeShardLayout(variables, shards, *collective, 1.0, true, &prepared, &layout);
  if (!agreed.ok()) fail_msg("%s", agreed.message().c_str());
  assert_int_equal(prepared, TW_OK);
  assert_int_equal(layout.local_ranks, 3);  // ranks 0, 1, 2
  assert_int_equal(layout.part_count, kWorld);
  assert_int_equal(layout.tensors.size(), 1);
  assert_int_equal(layout.tensors[0].boxes.size(), kWorld);  // the machine ids did not shift the boxes
  for (uint32_t r = 0; r < kWorld; ++r) {
    assert_int_equal(layout.tensors[0].boxes[r].part, r);
    assert_int_equal(layout.tensors[0].boxes[r].offset[0], 2 * r);
    assert_int_equal(layout.tensors[0].boxes[r].extent[0], 2);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(SharesOfTheCores),
      cmocka_unit_test(LauncherVariables),
      cmocka_unit_test(ThisProcess),
      cmocka_unit_test(LayoutCountsRanksOfThisMachine),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
