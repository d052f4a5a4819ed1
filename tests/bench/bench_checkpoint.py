"""Checkpoint save/restore from Python as users call it, against PyTorch in the same run (docs/performance/checkpoint.md).

``tw.Saver(variables=state).save(prefix, global_step=…)`` against ``torch.save(state_dict, path)``
and against ``torch.save`` followed by ``fsync`` of the file and its directory (the fair durable
comparison: a trainwatch save always fsyncs both); ``saver.restore`` against ``torch.load``. The state
is 256 MiB of float32, model-like (Gaussian weights σ=0.02, Adam-like moments m and v = m²), and the
same state in bfloat16 (128 MiB), in /dev/shm (tmpfs) and in a directory on the disk; and, in tmpfs, a
model's many small variables (2000 biases and norms of 64 to 4096 elements: the per-variable cost, which
a large state hides). Contenders are
timed in turn, best of N after one untimed run each (a job's steady state), wall time and the process's
CPU time (user + system) of the best run; the machine's load average is
printed since other processes skew wall times. trainwatch saves as by default (the evicted checkpoint's
file is deleted, C15) and, in the same run, with ``recycle_files=True`` (the evicted file overwritten
in place): the line "recycling" gives what the default costs.

usage: PYTHONPATH=<build>/bindings/python bench_checkpoint.py [MiB] [repeats] [disk directory]
(the disk directory defaults to $TW_BENCH_DISK_DIR, else /var/tmp).
"""
import os
import resource
import shutil
import sys
import tempfile
import time

import numpy as np
import torch

import trainwatch as tw

SAVE_TARGET = 1.5     # docs/performance/checkpoint.md: save throughput >= 1.5x torch.save
RESTORE_TARGET = 2.0  # restore throughput >= 2x torch.load
SIZE_TARGETS = {"float32": 1.19, "bfloat16": 1.45}  # raw bytes / file bytes


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def model_state(mib, dtype):
    """`mib` MiB of float32 (w: half of the bytes, m and v: a quarter each), converted to bfloat16 for
    the bfloat16 cell (half the bytes: the same model, as docs/performance/checkpoint.md measures it)."""
    n = (mib << 20) // 4
    rng = np.random.default_rng(0)
    w = rng.standard_normal(n // 2, dtype=np.float32) * np.float32(0.02)
    m = rng.standard_normal(n // 4, dtype=np.float32) * np.float32(1e-3)
    state = {"w": torch.from_numpy(w), "m": torch.from_numpy(m), "v": torch.from_numpy(m * m)}
    if dtype == "bfloat16":
        state = {k: v.to(torch.bfloat16) for k, v in state.items()}
    return state


def small_variables_state(dtype):
    """2000 variables of 64, 256, 1024 and 4096 elements in turn (~10 MiB of float32): biases and norms."""
    rng = np.random.default_rng(1)
    state = {f"v{i}": torch.from_numpy(rng.standard_normal(64 << 2 * (i % 4), dtype=np.float32) * np.float32(0.02))
             for i in range(2000)}
    return {k: v.to(torch.bfloat16) for k, v in state.items()} if dtype == "bfloat16" else state


def fsync_path(path, directory=False):
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def best_of(repeats, contenders):
    """Runs the contenders in turn `repeats` times, after one untimed run each (the steady state of a
    job that saves again and again: trainwatch deletes the file its retention evicted, or overwrites
    it when recycling, torch.save truncates and rewrites its own); {name: (best wall s, CPU s of that
    run)}."""
    for fn in contenders.values():
        fn()
    best = {name: (float("inf"), 0.0) for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            cpu = cpu_seconds()
            start = time.perf_counter()
            fn()
            wall = time.perf_counter() - start
            if wall < best[name][0]:
                best[name] = (wall, cpu_seconds() - cpu)
    return best


def cell(where, directory, dtype, mib, repeats, small=False):
    state = small_variables_state(dtype) if small else model_state(mib, dtype)
    raw = sum(t.numel() * t.element_size() for t in state.values())
    work = tempfile.mkdtemp(prefix="bench_checkpoint.", dir=directory)
    try:
        saver = tw.Saver(variables=state, max_to_keep=1)
        recycling = tw.Saver(variables=state, max_to_keep=1, recycle_files=True)
        os.mkdir(os.path.join(work, "default"))
        os.mkdir(os.path.join(work, "recycle"))
        prefix = os.path.join(work, "default", "model.ckpt")
        step = [0]
        latest = [None]

        def tw_save():
            step[0] += 1
            latest[0] = saver.save(prefix, global_step=step[0])

        def tw_save_recycling():
            recycling.save(os.path.join(work, "recycle", "model.ckpt"), global_step=step[0])

        torch_path = os.path.join(work, "model.pt")

        def torch_save():
            torch.save(state, torch_path)

        def torch_save_fsync():
            torch.save(state, torch_path)
            fsync_path(torch_path)
            fsync_path(work, directory=True)

        saves = best_of(repeats, {"trainwatch": tw_save, "trainwatch recycling": tw_save_recycling,
                                  "torch.save": torch_save, "torch.save+fsync": torch_save_fsync})
        restores = best_of(repeats, {"trainwatch": lambda: saver.restore(latest[0]),
                                     "torch.load": lambda: torch.load(torch_path)})
        size_ratio = raw / os.path.getsize(latest[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def gbs(seconds):
        return raw / seconds / 1e9

    ours, ours_cpu = saves["trainwatch"]
    print(f"{where} {dtype} ({raw >> 20} MiB{f' in {len(state)} small variables' if small else ''}, {directory}):")
    for name in ("torch.save", "torch.save+fsync"):
        theirs, theirs_cpu = saves[name]
        print(f"  save     trainwatch {gbs(ours):5.2f} GB/s [{ours * 1e3:4.0f} ms, {ours_cpu * 1e3:4.0f} ms CPU]   "
              f"{name:16s} {gbs(theirs):5.2f} GB/s [{theirs * 1e3:4.0f} ms, {theirs_cpu * 1e3:4.0f} ms CPU]   "
              f"ratio {theirs / ours:4.2f}x (target >= {SAVE_TARGET})")
    recycled, recycled_cpu = saves["trainwatch recycling"]
    print(f"  save     recycling  {gbs(recycled):5.2f} GB/s [{recycled * 1e3:4.0f} ms, {recycled_cpu * 1e3:4.0f} ms CPU]   "
          f"the default (evicted files deleted) takes {ours / recycled:4.2f}x its wall, "
          f"{ours_cpu / recycled_cpu if recycled_cpu else float('nan'):4.2f}x its CPU")
    load, load_cpu = restores["trainwatch"]
    theirs, theirs_cpu = restores["torch.load"]
    print(f"  restore  trainwatch {gbs(load):5.2f} GB/s [{load * 1e3:4.0f} ms, {load_cpu * 1e3:4.0f} ms CPU]   "
          f"torch.load       {gbs(theirs):5.2f} GB/s [{theirs * 1e3:4.0f} ms, {theirs_cpu * 1e3:4.0f} ms CPU]   "
          f"ratio {theirs / load:4.2f}x (target >= {RESTORE_TARGET})")
    print(f"  size     raw/file {size_ratio:.3f}x" + ("" if small else f" (target >= {SIZE_TARGETS[dtype]})"))
    return theirs / ours


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    disk = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("TW_BENCH_DISK_DIR", "/var/tmp")
    torch.set_num_threads(os.cpu_count() or 1)
    print(f"checkpoint save/restore from Python, best of {repeats}; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores at the start")
    for where, directory in (("tmpfs", "/dev/shm"), ("disk", disk)):
        for dtype in ("float32", "bfloat16"):
            cell(where, directory, dtype, mib, repeats)
    for dtype in ("float32", "bfloat16"):
        cell("tmpfs", "/dev/shm", dtype, 0, repeats, small=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
