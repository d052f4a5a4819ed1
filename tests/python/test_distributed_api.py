"""trainwatch.distributed in one process: the bridge from the library to a Python collective, the
session arguments, and the errors. Ranks are threads of this process meeting in memory (ThreadWorld),
so these tests need no network; the multi-process rules are test_distributed_torch.py's and
test_distributed_mpi.py's."""
import inspect
import os
import signal
import threading

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import distributed


class ThreadWorld:
    """`size` ranks, one thread each, whose collective meets in this object."""

    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size)
        self.slots = [None] * size

    def rank(self, rank):
        return ThreadRank(self, rank)


class ThreadRank(distributed.Collective):
    def __init__(self, world, rank):
        self.world, self.rank, self.world_size = world, rank, world.size
        self.calls = []

    def _meet(self, what, timeout):
        try:
            self.world.barrier.wait(timeout)
        except threading.BrokenBarrierError:
            raise tw.DeadlineExceededError(f"thread world {what}: not every rank came within {timeout} s") from None

    def allreduce_int64(self, values, op, timeout):
        self.calls.append(("allreduce_int64", values, op, timeout))
        self.world.slots[self.rank] = values.copy()
        self._meet("allreduce", timeout)
        reduce = {distributed.SUM: np.sum, distributed.MIN: np.min, distributed.MAX: np.max}[op]
        result = reduce(np.stack(self.world.slots), axis=0)
        self._meet("allreduce", timeout)
        values[:] = result

    def broadcast(self, data, root, timeout):
        self.calls.append(("broadcast", data, root, timeout))
        if self.rank == root:
            self.world.slots[root] = data.copy()
        self._meet("broadcast", timeout)
        data[:] = self.world.slots[root]
        self._meet("broadcast", timeout)

    def barrier(self, timeout):
        self.calls.append(("barrier", timeout))
        self._meet("barrier", timeout)


def loss_step(ctx):
    return {"loss": np.float32(0.5)}


def run_ranks(world, body):
    """body(rank_collective) on one thread per rank; {rank: result or exception}."""
    results = {}

    def target(rank):
        try:
            results[rank] = body(world.rank(rank))
        except BaseException as error:  # judged by the test
            results[rank] = error
    threads = [threading.Thread(target=target, args=(rank,)) for rank in range(world.size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive(), "a rank hung"
    return results


def test_votes_reach_python_as_one_reused_int64_view():
    collective = ThreadWorld(1).rank(0)
    with tw.MonitoredSession(collective=collective, collective_timeout_secs=5) as sess:
        before = len(collective.calls)
        for _ in range(3):
            sess.run(loss_step)
    votes = [call for call in collective.calls[before:] if call[0] == "allreduce_int64"]
    assert len(votes) >= 3  # one per run at least
    arrays = [call[1] for call in votes]
    assert all(a.dtype == np.int64 and a.flags.writeable and a.ndim == 1 for a in arrays)
    assert all(a is arrays[0] for a in arrays)  # the same numpy view every vote: nothing allocated
    assert all(call[3] == 5.0 for call in votes)
    assert any(call[0] == "barrier" for call in collective.calls)  # the session's close


def test_no_time_limit_reaches_python_as_none():
    collective = ThreadWorld(1).rank(0)
    with tw.MonitoredSession(collective=collective, collective_timeout_secs=None) as sess:
        sess.run(loss_step)
    assert all(call[-1] is None for call in collective.calls)


def test_is_chief_defaults_to_rank_0_with_a_collective_D11(tmp_path):
    assert inspect.signature(tw.MonitoredTrainingSession).parameters["is_chief"].default is tw.USE_DEFAULT

    def body(collective):  # two chiefs of one directory would fail on its lock
        params = {"w": np.zeros(2, np.float32)}
        with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), collective=collective, variables=params,
                                         hooks=[tw.StopAtStepHook(last_step=3)], save_checkpoint_steps=1,
                                         log_step_count_steps=None, collective_timeout_secs=30) as sess:
            chief = sess._session().is_chief()
            while not sess.should_stop():
                sess.run(loss_step)
            return chief, sess.global_step
    results = run_ranks(ThreadWorld(2), body)
    assert results == {0: (True, 3), 1: (False, 3)}


def test_bad_collectives_are_clear_errors():
    with pytest.raises(TypeError, match="allreduce_int64"):
        tw.MonitoredSession(collective=object())
    outside = ThreadWorld(2).rank(0)
    outside.rank = 2
    with pytest.raises(tw.InvalidArgumentError, match="rank"):
        tw.MonitoredSession(collective=outside)


def test_a_rank_that_never_comes_is_deadline_exceeded_not_a_hang_D9():
    lonely = ThreadWorld(2).rank(1)  # rank 0 never starts
    with pytest.raises(tw.DeadlineExceededError) as raised:
        tw.MonitoredSession(collective=lonely, collective_timeout_secs=0.5)
    assert "rank 1 of 2" in str(raised.value)


class Boom(Exception):
    pass


class RaisingCollective(ThreadRank):
    """A world of one whose allreduce raises from its `fail_at`-th call on."""

    def __init__(self, fail_at):
        super().__init__(ThreadWorld(1), 0)
        self.fail_at = fail_at
        self.raised = None

    def allreduce_int64(self, values, op, timeout):
        super().allreduce_int64(values, op, timeout)
        if sum(call[0] == "allreduce_int64" for call in self.calls) >= self.fail_at:
            self.raised = Boom("the engine broke")
            raise self.raised


def test_a_collective_that_raises_fails_the_run_with_its_own_exception_D9(tmp_path):
    collective = RaisingCollective(fail_at=4)
    params = {"w": np.zeros(2, np.float32)}
    sess = tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), collective=collective, variables=params,
                                       save_checkpoint_steps=1, log_step_count_steps=None)

    def step(ctx):
        params["w"] += 1
        return {"loss": np.float32(1)}
    with pytest.raises(Boom) as raised:
        for _ in range(10):
            sess.run(step)
    assert raised.value is collective.raised  # the very object, traceback included
    assert raised.traceback is not None
    step = int(tw.latest_checkpoint(tmp_path).rsplit("-", 1)[1])
    assert tw.load_variable(tw.latest_checkpoint(tmp_path), "w").tolist() == [float(step)] * 2


def test_sigterm_in_a_single_process_saves_and_stops_D10(tmp_path):
    params = {"w": np.zeros(2, np.float32)}

    def step(ctx):
        params["w"] += 1
        if ctx.global_step == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return {"loss": np.float32(1)}
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables=params, save_checkpoint_secs=None,
                                     log_step_count_steps=None, catch_preemption_signals=True) as sess:
        while not sess.should_stop():
            sess.run(step)
        assert sess.preempted
        assert sess.global_step == 4
    assert tw.latest_checkpoint(tmp_path).endswith("-4")
    assert tw.load_variable(tw.latest_checkpoint(tmp_path), "w").tolist() == [4.0, 4.0]
