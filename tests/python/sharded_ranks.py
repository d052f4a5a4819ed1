"""One rank of the sharded-checkpoint scenarios (tests/python/test_sharded.py), run as its own process by
distributed_world.run_gloo (usage as distributed_ranks.py).

Every rank holds rows [rank * R / N, (rank + 1) * R / N) of the same global tensors — numpy float32,
float64 and float16, torch bfloat16 and float32 — as tw.Shard variables, next to a replicated bias.
global_tensors() builds the global values identically in every rank and in the test, so the test
compares checkpoints bit for bit against them.
"""
import logging
import sys
import time

import numpy as np

import trainwatch as tw
from trainwatch import distributed
from distributed_ranks import TIMEOUT_SECS, main

ROWS = 8
# name → (shape of the global tensor, dtype, whose tensor holds the rank's rows)
SPECS = {"w32": ((ROWS, 3), "float32", "numpy"), "w64": ((ROWS, 2), "float64", "numpy"),
         "w16": ((ROWS,), "float16", "numpy"), "wbf16": ((ROWS, 4), "bfloat16", "torch"),
         "t32": ((ROWS, 5), "float32", "torch")}
BIAS = np.array([0.5, -1.5, 2.25], np.float32)
TRAIN_STEPS = 3


def global_tensors():
    """name → the global tensor's values as numpy arrays of its bytes (bfloat16 as uint16 bits)."""
    import torch
    rng = np.random.default_rng(15)
    tensors = {}
    for name, (shape, dtype, _) in SPECS.items():
        values = rng.standard_normal(shape) * 0.02
        if dtype == "bfloat16":
            tensors[name] = torch.from_numpy(values.astype(np.float32)).to(torch.bfloat16).view(torch.int16).numpy(
            ).view(np.uint16)
        else:
            tensors[name] = values.astype(dtype)
    return tensors


def as_library_tensor(name, bits):
    """The array a rank registers for `name` (a copy it owns): numpy, or a torch tensor."""
    import torch
    dtype, kind = SPECS[name][1:]
    array = np.ascontiguousarray(bits)
    if kind == "numpy":
        return array.copy()
    if dtype == "bfloat16":
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(array.copy())


def to_bits(value):
    """A registered array's bytes as numpy (bfloat16 as uint16 bits)."""
    import torch
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16:
            return value.view(torch.int16).numpy().view(np.uint16).copy()
        return value.numpy().copy()
    return np.array(value, copy=True)


def rows_of(rank, world_size):
    per = ROWS // world_size
    return rank * per, (rank + 1) * per


def shards(rank, world_size, tensors=None):
    """This rank's tw.Shard variables (rows of every global tensor) and the replicated bias."""
    tensors = tensors or global_tensors()
    begin, end = rows_of(rank, world_size)
    variables = {name: tw.Shard(as_library_tensor(name, bits[begin:end]), bits.shape, begin)
                 for name, bits in tensors.items()}
    variables["bias"] = BIAS.copy()
    return variables


def train_step(variables):
    """w += 1 on every shard, in the shard's own dtype (numpy or torch arithmetic)."""
    def step(ctx):
        for value in variables.values():
            value.tensor += 1
        return None
    return step


def scenario_session_save(collective, rank, workdir, report):
    """MonitoredTrainingSession over the shards: saves at creation (step 0), every 2 steps and at the end."""
    variables = shards(rank, collective.world_size)
    step_fn = train_step({n: v for n, v in variables.items() if isinstance(v, tw.Shard)})
    with tw.MonitoredTrainingSession(checkpoint_dir=str(workdir / "ckpt"), variables=variables,
                                     hooks=[tw.StopAtStepHook(last_step=TRAIN_STEPS)], save_checkpoint_steps=2,
                                     save_summaries_steps=None, log_step_count_steps=None, collective=collective,
                                     collective_timeout_secs=TIMEOUT_SECS) as sess:
        while not sess.should_stop():
            sess.run(step_fn)
    report["checkpoint"] = tw.latest_checkpoint(str(workdir / "ckpt"))


def scenario_saver_save(collective, rank, workdir, report):
    """tw.Saver with the collective: every rank calls save at the same point; the chief commits."""
    saver = tw.Saver(shards(rank, collective.world_size), collective=collective,
                     collective_timeout_secs=TIMEOUT_SECS)
    report["path"] = saver.save(str(workdir / "model.ckpt"), global_step=7)


def grid_box(rank, shape):
    """(offset, extent) of rank's box of a 2×2 grid of a 2-d tensor (halves of rows and of columns, the
    columns unevenly when odd); a 1-d tensor is cut in quarters of rows."""
    if len(shape) == 1:
        return (rank * shape[0] // 4,), (shape[0] // 4,)
    rows, cols = shape[0] // 2, shape[1] // 2
    row, col = divmod(rank, 2)
    return (row * rows, col * cols), (rows, cols if col == 0 else shape[1] - cols)


def box_of(bits, offset, extent):
    return bits[tuple(slice(o, o + e) for o, e in zip(offset, extent))]


def scenario_grid_save(collective, rank, workdir, report):
    """The 4 ranks hold a 2×2 grid of boxes of every tensor (N-d boxes, not slices of rows) and save."""
    variables = {}
    for name, bits in global_tensors().items():
        offset, extent = grid_box(rank, bits.shape)
        variables[name] = tw.Shard(as_library_tensor(name, box_of(bits, offset, extent)), bits.shape, offset)
    variables["bias"] = BIAS.copy()
    saver = tw.Saver(variables, collective=collective, collective_timeout_secs=TIMEOUT_SECS)
    report["path"] = saver.save(str(workdir / "model.ckpt"), global_step=9)


# Checkpoints the restore scenarios read, relative to the directory every job of a test shares: written
# by 4 ranks (saver_save; grid_save in boxes of a 2×2 grid), by 2 and by 1 (save), and by one
# process's plain Saver (the 1-part case).
SOURCES = {"4": "saver_save/model.ckpt-7", "grid": "grid_save/model.ckpt-9", "2": "save/world2/model.ckpt-2",
           "1": "save/world1/model.ckpt-1", "plain": "plain/model.ckpt-0"}


def zeroed(rank, world_size):
    """This rank's Shards (and bias) over zeros: what a restore must fill."""
    return shards(rank, world_size, {name: np.zeros_like(bits) for name, bits in global_tensors().items()})


def bits_of(variables):
    """name → hex of the registered bytes, for the report."""
    return {name: to_bits(value.tensor if isinstance(value, tw.Shard) else value).tobytes().hex()
            for name, value in variables.items()}


def scenario_save(collective, rank, workdir, report):
    """This job's slicing of the global tensors saved at step world_size (tw.Saver, every rank)."""
    directory = workdir / f"world{collective.world_size}"
    directory.mkdir(exist_ok=True)
    saver = tw.Saver(shards(rank, collective.world_size), collective=collective, collective_timeout_secs=TIMEOUT_SECS)
    report["path"] = saver.save(str(directory / "model.ckpt"), global_step=collective.world_size)


def scenario_restore(collective, rank, workdir, report):
    """Every checkpoint of SOURCES written so far, restored into this job's slicing with tw.Saver."""
    report["restored"] = {}
    for source, relative in SOURCES.items():
        path = workdir.parent / relative
        if not path.exists():
            continue
        variables = zeroed(rank, collective.world_size)
        tw.Saver(variables, collective=collective, collective_timeout_secs=TIMEOUT_SECS).restore(str(path))
        report["restored"][source] = bits_of(variables)


def scenario_fallback(collective, rank, workdir, report):
    """MonitoredTrainingSession restores workdir.parent/fallback, whose newest checkpoint has a corrupted
    part: every rank must restore the previous one (D16)."""
    variables = zeroed(rank, collective.world_size)
    with tw.MonitoredTrainingSession(checkpoint_dir=str(workdir.parent / "fallback"), variables=variables,
                                     save_summaries_steps=None, log_step_count_steps=None, save_checkpoint_secs=None,
                                     collective=collective, collective_timeout_secs=TIMEOUT_SECS) as sess:
        report["global_step"] = int(sess.run("global_step"))
        report["restored"] = bits_of(variables)


FAILING_TIMEOUT_SECS = 3.0  # scenario_save_collective_raises: one timeout, well under the job's limit


class RaisingInSave:
    """Rank 1's collective: its `fail_at`-th vote on a checkpoint's parts (a SUM of 3 int64 per rank)
    raises, as a bug in the user's engine would, without meeting the other ranks."""

    def __init__(self, inner, fail_at):
        self._inner, self._votes, self._fail_at = inner, 0, fail_at
        self.rank, self.world_size = inner.rank, inner.world_size

    def allreduce_int64(self, values, op, timeout):
        if op == distributed.SUM and len(values) == 3 * self.world_size:
            self._votes += 1
            if self._votes == self._fail_at:
                raise ValueError("injected failure of the collective inside a save")
        self._inner.allreduce_int64(values, op, timeout)

    def broadcast(self, data, root, timeout):
        self._inner.broadcast(data, root, timeout)

    def barrier(self, timeout):
        self._inner.barrier(timeout)


def scenario_save_collective_raises(collective, rank, workdir, report):
    """Sharded saves every step; rank 1's collective raises in the save after the first run (its second:
    the first is the save at creation). Every rank must fail in that save (D9), none by a signal."""
    if rank == 1:
        collective = RaisingInSave(collective, fail_at=2)
    # The library's ERROR lines: none for the failed run (it is reported once, by the exception, H34).
    report["logged"] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: report["logged"].append(record.getMessage())
    logging.getLogger("trainwatch").addHandler(handler)
    variables = shards(rank, collective.world_size)
    step_fn = train_step({n: v for n, v in variables.items() if isinstance(v, tw.Shard)})
    with tw.MonitoredTrainingSession(checkpoint_dir=str(workdir / "ckpt"), variables=variables,
                                     save_checkpoint_steps=1, save_summaries_steps=None, log_step_count_steps=None,
                                     collective=collective, collective_timeout_secs=FAILING_TIMEOUT_SECS) as sess:
        report["running"] = time.monotonic()
        for _ in range(3):
            sess.run(step_fn)


if __name__ == "__main__":
    main(sys.argv[1:], globals())
