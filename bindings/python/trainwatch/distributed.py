"""Many processes, one training run: the collective that a job's sessions agree through.

In a data-parallel job every process (rank) runs its own session. Given a collective, the sessions of
all ranks agree — on the restored step at start, and after every run on stop, NaN, recovery and
preemption — so that no rank stops, rolls back or recovers alone while the others wait in their next
allreduce (trainwatch/distributed.h lists every call and what it exchanges). The talking is done by the
engine the job already runs on:

- ``TorchCollective(group=None)``: torch.distributed, after ``init_process_group``. Gloo groups are used
  as they are. For an NCCL (or any non-Gloo) group the adapter creates a Gloo side group over the same
  ranks for its small CPU messages, so a vote never launches a GPU kernel: construct it on every rank
  at the same point of the program (creating a group is itself collective).
- ``MPICollective(comm)``: mpi4py (``python3-mpi4py``), e.g. ``MPICollective(MPI.COMM_WORLD)``.
- Any object with ``rank``, ``world_size`` and the three methods of ``Collective``, for another engine.

Pass one to ``MonitoredTrainingSession(..., collective=...)`` (or ``MonitoredSession``); ``is_chief``
then defaults to ``rank == 0``. Every rank of the job passes one.

Timeouts: each call gets the session's ``collective_timeout_secs`` (None: no limit). An operation that
does not finish in time raises ``DeadlineExceededError``; one whose peer is gone raises
``UnavailableError``; the session call then fails with that class, its message naming the operation
and the rank. What the engines do when a rank dies:

- Gloo notices a killed peer at once (its TCP connection closes): the waiting ranks get
  ``UnavailableError`` well before the timeout. A peer that is alive but stuck is noticed only by the
  timeout. ``work.wait(timeout)`` returns control at the timeout, but Gloo's own operation stays pending
  until the process group's timeout (``init_process_group(timeout=…)``, 30 minutes by default), and
  destroying the group waits for it: give the group a timeout close to the collective's.
- MPI cannot cancel a collective: the adapter polls a non-blocking one until the timeout, then raises
  ``DeadlineExceededError`` and leaves it pending. Under ``mpirun`` a dead rank usually ends the whole
  job; after a timeout, end the job (``comm.Abort()``) rather than go on.

Both adapters reduce into a private buffer of their own and copy the result back, so an operation left
pending after a timeout never writes into memory the session has freed; the buffer is kept from one
vote to the next, so a vote allocates nothing.
"""
import datetime
import time

import numpy as np

from .errors import DeadlineExceededError, FailedPreconditionError, InvalidArgumentError, UnavailableError

# tw_reduce_op (trainwatch/distributed.h; the values are stable).
SUM = 1
MIN = 2
MAX = 3

_OP_NAMES = {SUM: "SUM", MIN: "MIN", MAX: "MAX"}


class Collective:
    """What a session calls: subclass (or duck-type) it for an engine of your own. ``rank`` (0 is the
    chief by default) and ``world_size`` are read once, when a session's options are built. The methods
    work in place on numpy arrays over the session's memory, must return only when every rank has
    called them (or raise), and get ``timeout`` in seconds (None: no limit). Raise
    ``DeadlineExceededError`` on a timeout and ``UnavailableError`` when a peer is gone; any other
    exception fails the session call and is raised again from it unchanged. Every rank makes the same
    calls in the same order with the same sizes."""

    rank = 0
    world_size = 1

    def allreduce_int64(self, values, op, timeout):
        """``values`` (int64 array) becomes the element-wise ``op`` (SUM, MIN or MAX) over every rank."""
        raise NotImplementedError

    def broadcast(self, data, root, timeout):
        """``data`` (uint8 array) on rank ``root`` is copied into ``data`` on every other rank."""
        raise NotImplementedError

    def barrier(self, timeout):
        """Returns when every rank has entered it."""
        raise NotImplementedError


class _Staging:
    """A private int64 buffer per vector length, kept from call to call, retired after a timeout
    (an operation still pending may write into it later)."""

    def __init__(self, wrap):
        self._wrap = wrap  # numpy array → what the engine reduces (a torch view, or the array itself)
        self._buffers = {}

    def get(self, count):
        entry = self._buffers.get(count)
        if entry is None:
            array = np.zeros(count, np.int64)
            entry = self._buffers[count] = (array, self._wrap(array))
        return entry

    def retire(self, count):
        self._buffers.pop(count, None)


def _describe_timeout(timeout):
    return "no time limit" if timeout is None else f"{timeout:g} s"


class TorchCollective(Collective):
    """A collective over torch.distributed (``init_process_group`` must have run). ``group`` is the
    process group of the job's ranks (None: the default group). Gloo groups are used directly; for
    any other backend (NCCL) a Gloo side group over the same ranks carries these small CPU messages,
    created here with the default group's timeout — so construct it on every rank at the same point."""

    def __init__(self, group=None):
        import torch
        import torch.distributed as dist
        if not dist.is_available() or not dist.is_initialized():
            raise FailedPreconditionError("TorchCollective needs torch.distributed.init_process_group() first")
        self._torch = torch
        self._dist = dist
        self.backend = str(dist.get_backend(group))
        if self.backend != "gloo":
            ranks = dist.get_process_group_ranks(group) if group is not None else list(range(dist.get_world_size()))
            group = dist.new_group(ranks=ranks, backend="gloo")
        self._group = group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self._global_ranks = (list(range(self.world_size)) if group is None
                              else dist.get_process_group_ranks(group))
        self._ops = {SUM: dist.ReduceOp.SUM, MIN: dist.ReduceOp.MIN, MAX: dist.ReduceOp.MAX}
        self._staging = _Staging(torch.from_numpy)
        self._timeout_secs, self._timeout = None, None  # the last timeout and its timedelta

    def allreduce_int64(self, values, op, timeout):
        reduce_op = self._ops.get(op)
        if reduce_op is None:
            raise InvalidArgumentError(f"TorchCollective: unknown reduce op {op}")
        count = len(values)
        array, tensor = self._staging.get(count)
        np.copyto(array, values)
        try:
            work = self._dist.all_reduce(tensor, op=reduce_op, group=self._group, async_op=True)
            self._wait(work, timeout)
        except BaseException as error:
            self._staging.retire(count)
            self._raise(error, lambda: f"allreduce ({_OP_NAMES[op]} of {count} int64)", timeout)
        np.copyto(values, array)

    def broadcast(self, data, root, timeout):
        staged = data.copy()  # once per session creation; a pending broadcast may outlive `data`
        tensor = self._torch.from_numpy(staged)
        src = self._global_ranks[root]
        try:
            self._wait(self._dist.broadcast(tensor, src=src, group=self._group, async_op=True), timeout)
        except BaseException as error:
            self._raise(error, lambda: f"broadcast ({len(data)} bytes from rank {root})", timeout)
        np.copyto(data, staged)

    def barrier(self, timeout):
        try:
            self._wait(self._dist.barrier(group=self._group, async_op=True), timeout)
        except BaseException as error:
            self._raise(error, lambda: "barrier", timeout)

    def _wait(self, work, timeout):
        if timeout is None:
            work.wait()
            return
        if timeout != self._timeout_secs:  # the session passes the same timeout every call
            # timedelta(0) would mean "no limit" to torch
            self._timeout_secs, self._timeout = timeout, datetime.timedelta(seconds=max(timeout, 1e-3))
        work.wait(timeout=self._timeout)

    def _raise(self, error, what, timeout):
        """Raises the error of an operation described by what() (built only on this path)."""
        if not isinstance(error, RuntimeError):
            raise error
        where = f"torch.distributed {what()} over {self.world_size} ranks ({self.backend})"
        text = str(error)
        if "timed out" in text.lower() or "timeout" in text.lower():
            raise DeadlineExceededError(f"{where} did not complete within {_describe_timeout(timeout)}: "
                                        f"{text}") from error
        raise UnavailableError(f"{where} failed, a peer is gone: {text}") from error


class MPICollective(Collective):
    """A collective over an mpi4py communicator (``MPI.COMM_WORLD`` or a sub-communicator). With a
    timeout it polls a non-blocking operation; without one it makes the blocking call."""

    def __init__(self, comm):
        from mpi4py import MPI
        self._mpi = MPI
        self._comm = comm
        self.rank = comm.Get_rank()
        self.world_size = comm.Get_size()
        self._ops = {SUM: MPI.SUM, MIN: MPI.MIN, MAX: MPI.MAX}
        self._staging = _Staging(lambda array: array)

    def allreduce_int64(self, values, op, timeout):
        if op not in self._ops:
            raise InvalidArgumentError(f"MPICollective: unknown reduce op {op}")
        what = f"allreduce ({_OP_NAMES[op]} of {len(values)} int64)"
        if timeout is None:
            self._blocking(lambda: self._comm.Allreduce(self._mpi.IN_PLACE, values, op=self._ops[op]), what)
            return
        array, _ = self._staging.get(len(values))
        np.copyto(array, values)
        self._poll(lambda: self._comm.Iallreduce(self._mpi.IN_PLACE, array, op=self._ops[op]), what, timeout,
                   len(values))
        np.copyto(values, array)

    def broadcast(self, data, root, timeout):
        what = f"broadcast ({len(data)} bytes from rank {root})"
        if timeout is None:
            self._blocking(lambda: self._comm.Bcast(data, root=root), what)
            return
        staged = data.copy()
        self._poll(lambda: self._comm.Ibcast(staged, root=root), what, timeout, None)
        np.copyto(data, staged)

    def barrier(self, timeout):
        if timeout is None:
            self._blocking(self._comm.Barrier, "barrier")
        else:
            self._poll(self._comm.Ibarrier, "barrier", timeout, None)

    def _where(self, what):
        return f"MPI {what} over {self.world_size} ranks"

    def _blocking(self, call, what):
        try:
            call()
        except self._mpi.Exception as error:
            raise UnavailableError(f"{self._where(what)} failed: {error}") from error

    def _poll(self, start, what, timeout, staged_count):
        deadline = time.monotonic() + timeout
        try:
            request = start()
            spins = 0
            while not request.Test():
                if time.monotonic() > deadline:
                    if staged_count is not None:
                        self._staging.retire(staged_count)
                    raise DeadlineExceededError(f"{self._where(what)} did not complete within "
                                                f"{_describe_timeout(timeout)} (MPI cannot cancel it: end the job)")
                spins += 1
                time.sleep(0 if spins < 1000 else 0.001)  # spin first: a vote takes microseconds
        except self._mpi.Exception as error:
            raise UnavailableError(f"{self._where(what)} failed: {error}") from error


def _rank_of(collective):
    """The rank of a would-be collective, after checking it has what a session calls."""
    for name in ("allreduce_int64", "broadcast", "barrier"):
        if not callable(getattr(collective, name, None)):
            raise TypeError(f"collective must have a callable {name}(); got {type(collective).__name__}")
    for name in ("rank", "world_size"):
        if not isinstance(getattr(collective, name, None), (int, np.integer)):
            raise TypeError(f"collective.{name} must be an int; got {getattr(collective, name, None)!r}")
    return int(collective.rank)


def _configure(options, collective, timeout_secs, vote_every_n_runs, restore_via_broadcast,
               catch_preemption_signals):
    """Puts a session's distributed settings on its native options."""
    from . import native
    if catch_preemption_signals:
        options.set_int64(native.TW_OPT_CATCH_PREEMPTION_SIGNALS, 1)
    if collective is None:
        return
    rank = _rank_of(collective)
    options.set_double(native.TW_OPT_COLLECTIVE_TIMEOUT_SECS, -1.0 if timeout_secs is None else float(timeout_secs))
    options.set_int64(native.TW_OPT_VOTE_EVERY_N_RUNS, int(vote_every_n_runs))
    if restore_via_broadcast:
        options.set_int64(native.TW_OPT_RESTORE_VIA_BROADCAST, 1)
    native.set_collective(options, collective, rank, int(collective.world_size))
