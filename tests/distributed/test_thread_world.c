/* The in-process world the distributed tests run their ranks in: it must reduce, broadcast and time
 * out like a real engine, or the tests built on it prove nothing. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

typedef struct shared {
  thread_world *world;
  int64_t sums[4][2];
  int64_t maxes[4];
  char received[4][8];
  tw_status status[4];
  char message[4][200];
} shared;

static void reduce_and_broadcast(int rank, void *arg) {
  shared *s = arg;
  tw_collective c = thread_world_collective(s->world, rank);
  void *u = thread_world_user_data(s->world, rank);
  s->sums[rank][0] = rank + 1;
  s->sums[rank][1] = 10 * rank;
  if (c.allreduce_int64(u, s->sums[rank], 2, TW_REDUCE_SUM, 5.0) != TW_OK) return;
  s->maxes[rank] = rank * 7 - 3;
  if (c.allreduce_int64(u, &s->maxes[rank], 1, TW_REDUCE_MAX, 5.0) != TW_OK) return;
  if (rank == 2) memcpy(s->received[rank], "from-2!", 8);
  if (c.broadcast(u, s->received[rank], 8, 2, 5.0) != TW_OK) return;
  s->status[rank] = c.barrier(u, 5.0);
}

static void every_rank_sees_the_reduction_and_the_root_bytes(void **state) {
  (void)state;
  shared s;
  memset(&s, 0, sizeof s);
  for (int r = 0; r < 4; ++r) s.status[r] = -1;
  s.world = thread_world_create(4);
  assert_non_null(s.world);
  assert_int_equal(thread_world_run(s.world, reduce_and_broadcast, &s), 0);
  for (int r = 0; r < 4; ++r) {
    assert_int_equal(s.status[r], TW_OK);
    assert_int_equal(s.sums[r][0], 1 + 2 + 3 + 4);
    assert_int_equal(s.sums[r][1], 0 + 10 + 20 + 30);
    assert_int_equal(s.maxes[r], 18);
    assert_string_equal(s.received[r], "from-2!");
    assert_int_equal(thread_world_operations(s.world, r), 4);
  }
  thread_world_destroy(s.world);
}

/* Rank 3 never comes: the others leave after the timeout, told how many arrived. */
static void absent_rank(int rank, void *arg) {
  shared *s = arg;
  if (rank == 3) return;
  tw_collective c = thread_world_collective(s->world, rank);
  s->status[rank] = c.barrier(thread_world_user_data(s->world, rank), 0.2);
  strncpy(s->message[rank], tw_last_error_message(), sizeof s->message[rank] - 1);
}

static void a_missing_rank_times_out_the_others(void **state) {
  (void)state;
  shared s;
  memset(&s, 0, sizeof s);
  s.world = thread_world_create(4);
  assert_int_equal(thread_world_run(s.world, absent_rank, &s), 0);
  for (int r = 0; r < 3; ++r) {
    assert_int_equal(s.status[r], TW_DEADLINE_EXCEEDED);
    assert_non_null(strstr(s.message[r], "of 4 ranks arrived"));
  }
  thread_world_destroy(s.world);
}

static void faulty_rank(int rank, void *arg) {
  shared *s = arg;
  tw_collective c = thread_world_collective(s->world, rank);
  s->status[rank] = c.barrier(thread_world_user_data(s->world, rank), 0.2);
}

static void an_injected_fault_fails_that_rank_only(void **state) {
  (void)state;
  shared s;
  memset(&s, 0, sizeof s);
  s.world = thread_world_create(2);
  thread_world_fail_next(s.world, 1, TW_UNAVAILABLE, 1);
  assert_int_equal(thread_world_run(s.world, faulty_rank, &s), 0);
  assert_int_equal(s.status[1], TW_UNAVAILABLE);
  assert_int_equal(s.status[0], TW_DEADLINE_EXCEEDED); /* its peer never came */
  thread_world_destroy(s.world);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rank_sees_the_reduction_and_the_root_bytes),
      cmocka_unit_test(a_missing_rank_times_out_the_others),
      cmocka_unit_test(an_injected_fault_fails_that_rank_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
