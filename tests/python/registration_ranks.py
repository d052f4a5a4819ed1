"""One rank of the registration-failure scenarios (tests/python/test_registration_failure.py), run as its
own process by distributed_world.run_gloo (usage as distributed_ranks.py).

Rank 1's registration of its variables fails — a box outside the global shape (the library's check), an
offset that is no int64 or an array of an unknown dtype (the package's checks, before anything reaches
the library), a non-contiguous tensor — while rank 0's is fine; both go on as user code does, into
MonitoredTrainingSession or Saver. Every collective operation may wait an hour: a rank left waiting for
rank 1 would hang the job past the harness's limit (D1). Also: the chief cannot prepare the directory
of a sharded save (another Saver holds its lock), and every rank hears why (D17).
"""
import sys

import numpy as np

import trainwatch as tw
from distributed_ranks import main

FOREVER_SECS = 3600.0
GLOBAL_SHAPE = (4, 3)


def rows(rank):
    return np.full((2, 3), float(rank), np.float32)


def good_shard(rank):
    return tw.Shard(rows(rank), GLOBAL_SHAPE, 2 * rank)


def bad_shard(kind):
    import torch
    return {"outside": lambda: tw.Shard(rows(1), GLOBAL_SHAPE, 3),
            "overflow": lambda: tw.Shard(rows(1), GLOBAL_SHAPE, 2**63),
            "strided": lambda: tw.Shard(torch.zeros(3, 2).t(), GLOBAL_SHAPE, 2),
            "dtype": lambda: tw.Shard(np.zeros((2, 3), np.complex64), GLOBAL_SHAPE, 2)}[kind]()


def variables(rank, kind):
    return {"w": good_shard(rank) if rank == 0 else bad_shard(kind), "b": np.zeros(3, np.float32)}


def session(collective, rank, kind):
    with tw.MonitoredTrainingSession(variables=variables(rank, kind), collective=collective,
                                     collective_timeout_secs=FOREVER_SECS, save_summaries_steps=None,
                                     log_step_count_steps=None):
        pass


def saver(collective, rank, kind):
    tw.Saver(variables(rank, kind), collective=collective, collective_timeout_secs=FOREVER_SECS)


def scenario_session_outside(collective, rank, workdir, report):
    session(collective, rank, "outside")


def scenario_session_overflow(collective, rank, workdir, report):
    session(collective, rank, "overflow")


def scenario_saver_strided(collective, rank, workdir, report):
    saver(collective, rank, "strided")


def scenario_saver_dtype(collective, rank, workdir, report):
    saver(collective, rank, "dtype")


def scenario_chief_cannot_prepare(collective, rank, workdir, report):
    """The chief's directory is held by another Saver of its process: the sharded save fails on both."""
    holder = None
    if rank == 0:
        holder = tw.Saver({"other": np.zeros(1, np.float32)})
        holder.save(str(workdir / "other.ckpt"))
    try:
        tw.Saver({"w": good_shard(rank)}, collective=collective, collective_timeout_secs=FOREVER_SECS).save(
            str(workdir / "model.ckpt"), global_step=1)
    finally:
        del holder


if __name__ == "__main__":
    main(sys.argv[1:], globals())
