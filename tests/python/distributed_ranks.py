"""One rank of the multi-rank pytest scenarios (tests/python/test_distributed_*.py), run as its own process.

usage: distributed_ranks.py SCENARIO[,SCENARIO…] RANK WORLD_SIZE PORT WORKDIR   (torch.distributed, Gloo)
       mpirun -np N distributed_ranks.py SCENARIO[,SCENARIO…] mpi - - WORKDIR   (mpi4py)

Scenarios that leave the job healthy run one after the other in the same processes (starting 4
processes that import torch is what takes time here). Every rank trains the same toy model (w += 1 per step, loss = sum(w)) under a MonitoredTrainingSession
with a collective, and writes what it saw to WORKDIR/SCENARIO/rankR.json: the global step after every run, how
many sessions were created, the exception that ended it (class and message), and the final weights.
The scenario decides what goes wrong, and on which rank.
"""
import datetime
import faulthandler
import json
import os
import pathlib
import signal
import sys
import time
import traceback

import numpy as np

import trainwatch as tw
from trainwatch.distributed import MPICollective, TorchCollective

TIMEOUT_SECS = 15.0  # every collective operation; the pytest side waits longer for the whole job


class Record(tw.SessionRunHook):
    """Global step after every run, and session creations."""

    def __init__(self, report):
        self.report = report

    def after_create_session(self, session, coord):
        self.report["creations"].append(session.global_step)

    def after_run(self, run_context, run_values):
        self.report["steps"].append(run_context.session.global_step)


class Model:
    """w += 1 every step; the loss is sum(w), or NaN once at `nan_at` on this rank."""

    def __init__(self):
        self.w = np.zeros(4, np.float32)
        self.nan_at = None
        self.nan_loss_at = None  # the loss alone is NaN once at this step; w stays finite
        self.abort_at = None
        self.kill_at = None
        self.signal_at = None

    def step(self, ctx):
        step = ctx.global_step
        if step == self.abort_at:
            self.abort_at = None
            raise tw.AbortedError("injected preemption of this rank's worker")
        if step == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if step == self.signal_at:
            self.signal_at = None
            os.kill(os.getpid(), signal.SIGTERM)
        self.w += 1
        loss = np.float32(self.w.sum())
        if step == self.nan_loss_at:  # a NaN loss whose weights are still finite (what a save writes)
            self.nan_loss_at = None
            loss = np.float32("nan")
        if step == self.nan_at:  # a divergence: this rank's weights are ruined too
            self.nan_at = None
            self.w[:] = np.nan
            loss = np.float32("nan")
        return {"loss": loss}


class FailingCollective:
    """Wraps a collective; the `fail_at`-th allreduce raises ValueError (a bug in the user's engine)."""

    def __init__(self, inner, fail_at):
        self._inner, self._calls, self._fail_at = inner, 0, fail_at
        self.rank, self.world_size = inner.rank, inner.world_size

    def allreduce_int64(self, values, op, timeout):
        self._calls += 1
        if self._calls == self._fail_at:
            raise ValueError("injected failure of the collective")
        self._inner.allreduce_int64(values, op, timeout)

    def broadcast(self, data, root, timeout):
        self._inner.broadcast(data, root, timeout)

    def barrier(self, timeout):
        self._inner.barrier(timeout)


def train(collective, workdir, report, hooks=(), steps=12, model=None, checkpoint_dir=None, **session_args):
    model = model or Model()
    stop = tw.StopAtStepHook(last_step=steps)
    record = Record(report)
    with tw.MonitoredTrainingSession(checkpoint_dir=str(checkpoint_dir or workdir / "ckpt"), variables={"w": model.w},
                                     hooks=[*hooks, stop, record], save_checkpoint_steps=2,
                                     save_summaries_steps=None, log_step_count_steps=None, collective=collective,
                                     collective_timeout_secs=TIMEOUT_SECS, **session_args) as sess:
        while not sess.should_stop():
            sess.run(model.step)
        report["preempted"] = bool(getattr(sess, "preempted", False))
    report["w"] = model.w.tolist()


def scenario_stop(collective, rank, workdir, report):
    """Rank 1 alone asks to stop after the run of step 5; the others have no reason to."""
    class StopOnce(tw.SessionRunHook):
        def after_run(self, run_context, run_values):
            if run_context.session.global_step == 5:
                run_context.request_stop()
    train(collective, workdir, report, hooks=[StopOnce()] if rank == 1 else [], steps=100)


def scenario_nan_fail(collective, rank, workdir, report):
    model = Model()
    if rank == 2:
        model.nan_at = 4
    train(collective, workdir, report, hooks=[tw.NanTensorHook("loss")], model=model)


def scenario_nan_rollback(collective, rank, workdir, report):
    model = Model()
    if rank == 2:
        model.nan_at = 6  # the run from step 6 ends at 7, between checkpoints (every 2 steps)
    train(collective, workdir, report, hooks=[tw.NanTensorHook("loss", action="rollback")], model=model)


def scenario_nan_loss_on_save(collective, rank, workdir, report):
    model = Model()
    if rank == 2:
        model.nan_loss_at = 5  # the run from step 5 ends at 6, a save step: the chief saves that run first
    train(collective, workdir, report, hooks=[tw.NanTensorHook("loss", action="rollback")], model=model)


def scenario_abort(collective, rank, workdir, report):
    model = Model()
    if rank == 1:
        model.abort_at = 5
    train(collective, workdir, report, model=model)


def scenario_kill(collective, rank, workdir, report):
    model = Model()
    if rank == 3:
        model.kill_at = 7
    train(collective, workdir, report, model=model, steps=100)


def scenario_sigterm(collective, rank, workdir, report):
    model = Model()
    if rank == 1:
        model.signal_at = 5
    train(collective, workdir, report, model=model, steps=100, catch_preemption_signals=True)


def scenario_mismatch(collective, rank, workdir, report):
    """Each rank has a checkpoint directory of its own (no shared file system, D2): the checkpoint the
    chief names, model.ckpt-10, holds global step 11 in rank 1's."""
    own = workdir / f"own{rank}"
    own.mkdir()
    tw.Saver({"w": np.full(4, 10, np.float32), "global_step": np.array(10 + (rank == 1), np.int64)}).save(
        str(own / "model.ckpt-10"))
    train(collective, workdir, report, checkpoint_dir=own, steps=20)


def scenario_collective_raises(collective, rank, workdir, report):
    if rank == 1:
        collective = FailingCollective(collective, fail_at=8)
    train(collective, workdir, report, steps=100)


def torch_collective(rank, world_size, port):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=TIMEOUT_SECS))
    return TorchCollective()


def main(argv, scenarios=None):
    """Runs the named scenarios: functions scenario_NAME of `scenarios` (a module's globals(); this one's
    by default)."""
    scenarios = globals() if scenarios is None else scenarios
    names, rank, world_size, port, workdir = argv
    faulthandler.register(signal.SIGUSR2, all_threads=True)  # the harness's stack dump of a hung rank
    workdir = pathlib.Path(workdir)
    if rank == "mpi":
        from mpi4py import MPI
        collective = MPICollective(MPI.COMM_WORLD)
    else:
        collective = torch_collective(int(rank), int(world_size), int(port))
    rank = collective.rank
    for name in names.split(","):
        scenario_dir = workdir / name
        scenario_dir.mkdir(exist_ok=True)
        report = {"rank": rank, "steps": [], "creations": [], "error": None, "message": None,
                  "started": time.monotonic()}
        try:
            scenarios["scenario_" + name](collective, rank, scenario_dir, report)
        except Exception as error:  # what the scenario is about: reported, judged by the test
            report["error"] = type(error).__name__
            report["message"] = str(error)
            report["notes"] = list(getattr(error, "__notes__", []))  # the library's context, if it added some
            report["traceback"] = traceback.format_exc()
        report["ended"] = time.monotonic()
        (scenario_dir / f"rank{rank}.json").write_text(json.dumps(report))
    sys.stdout.flush()
    if isinstance(collective, MPICollective):
        from mpi4py import MPI
        MPI.Finalize()  # mpirun counts a rank that exits without it as failed (MPI jobs here stay healthy)
    os._exit(0)  # no process-group teardown: a peer may be dead, and the test judges the report


if __name__ == "__main__":
    main(sys.argv[1:])
