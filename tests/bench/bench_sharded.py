"""Sharded checkpoints of a job of 4 ranks (issue 15), against what PyTorch users do without DCP: every
rank calling torch.save / torch.load on its own shard, in the same run.

Four processes over torch.distributed (Gloo on 127.0.0.1) each hold a 64 MiB shard of a model-like
state — bench_checkpoint.model_state: Gaussian weights σ=0.02 and Adam-like moments, in float32 and the
same state in bfloat16 (half the bytes) — registered as tw.Shard rows of the global tensors. Measured,
best of N, job-wide wall time (from a barrier to a barrier, so the slowest rank counts), total bytes of
every rank / wall time:
- save: tw.Saver(shards, collective=TorchCollective()).save (every rank writes its part, the chief
  commits) against torch.save per rank, and torch.save + fsync of the file and directory per rank (the
  durable comparison: a trainwatch save always fsyncs); and against each rank saving its shard alone
  with a plain tw.Saver (the parts' own writing time: the difference is the commit's cost);
- restore: saver.restore of the sharded checkpoint into every rank's shard against torch.load per rank,
  and torch.load + copy_ into the rank's tensors (what model.load_state_dict(torch.load(f)) does; like
  saver.restore it ends with the values in the live tensors). Repeated in one process, torch.load gets
  its tensors' memory back from the allocator: tensors up to 32 MiB (every bfloat16 one here) come from
  glibc's heap without a page fault after the first run, larger ones are mapped afresh each time — a
  restore at a job's start pays the faults (run with MALLOC_MMAP_THRESHOLD_=1048576 to measure that);
- size: the checkpoint's files (index + parts) / raw bytes, and torch's files / raw bytes;
- scaling: the save time of 1, 2 and 4 ranks holding the same total state (4 × 64 MiB) between them.
Each line prints the anchor, trainwatch and their ratio, with rank 0's CPU time (all its threads) of
the best run: on a shared machine the wall time of 4 ranks on 2 cores is mostly whose turn it was.
Each rank of trainwatch's sharded saver uses its share of the cores (checkpoint/parallel.h: one thread
each here); the plain tw.Saver of "parts alone" every core. On a 2-core machine 4 ranks share 2 cores: the
scaling is bounded by the cores, not by the protocol. The load average is printed: figures taken while
other work runs are skewed.

usage: PYTHONPATH=<build>/bindings/python bench_sharded.py [MiB per rank] [repeats] [disk directory]
(the disk directory defaults to $TW_BENCH_DISK_DIR, else /var/tmp).
"""
import datetime
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile

import torch
import torch.distributed as dist

import trainwatch as tw
from trainwatch.distributed import TorchCollective

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_checkpoint import best_of, fsync_path, model_state  # noqa: E402  (the shared generator)

RANKS = 4
SAVE_TARGET = 1.3     # issue 15: sharded save >= 1.3x the per-rank torch.save baseline's throughput
RESTORE_TARGET = 1.5  # restore >= 1.5x torch.load's
SIZE_TARGETS = {"float32": 0.86, "bfloat16": 0.70}  # file bytes / raw bytes, at most
TIMEOUT = datetime.timedelta(seconds=900)


def shards(state, rank, world_size):
    """The rank's state as tw.Shard rows of global tensors world_size times as long."""
    return {name: tw.Shard(t, (t.shape[0] * world_size,), t.shape[0] * rank) for name, t in state.items()}


def raw_bytes(state):
    return sum(t.numel() * t.element_size() for t in state.values())


def checkpoint_bytes(path):
    """The index and every part of a sharded checkpoint (a plain one: its single file)."""
    directory, name = os.path.split(path)
    return sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory)
               if f == name or f.startswith(name + ".part-"))


def shared_dir(base, rank):
    """A fresh directory under `base` that every rank names alike (rank 0 creates it)."""
    name = [tempfile.mkdtemp(prefix="bench_sharded.", dir=base) if rank == 0 else None]
    dist.broadcast_object_list(name, src=0)
    return name[0]


def job_wide(fn):
    """fn on this rank, then a barrier: timed by best_of, the slowest rank decides."""
    def run():
        fn()
        dist.barrier()
    return run


def compare(directory, dtype, mib, repeats, rank):
    """Every rank: sharded save/restore against per-rank torch.save/torch.load. Rank 0 returns figures."""
    state = model_state(mib, dtype)
    variables = shards(state, rank, RANKS)
    work = shared_dir(directory, rank)
    own = os.path.join(work, f"rank{rank}")
    os.makedirs(own)
    try:
        saver = tw.Saver(variables, max_to_keep=1, collective=TorchCollective())
        alone = tw.Saver(dict(state), max_to_keep=1)
        prefix, own_prefix = os.path.join(work, "model.ckpt"), os.path.join(own, "alone.ckpt")
        torch_path = os.path.join(own, "shard.pt")
        step, latest = [0], [None]

        def tw_save():
            step[0] += 1
            latest[0] = saver.save(prefix, global_step=step[0])

        def torch_save_fsync():
            torch.save(state, torch_path)
            fsync_path(torch_path)
            fsync_path(own, directory=True)

        dist.barrier()
        saves = best_of(repeats, {
            "trainwatch": job_wide(tw_save),
            "torch.save": job_wide(lambda: torch.save(state, torch_path)),
            "torch.save+fsync": job_wide(torch_save_fsync),
            "parts alone": job_wide(lambda: alone.save(own_prefix, global_step=step[0])),
        })
        def torch_load_copy():
            for name, value in torch.load(torch_path).items():
                state[name].copy_(value)

        restores = best_of(repeats, {"trainwatch": job_wide(lambda: saver.restore(latest[0])),
                                     "torch.load": job_wide(lambda: torch.load(torch_path)),
                                     "torch.load+copy_": job_wide(torch_load_copy)})
        sizes = [checkpoint_bytes(latest[0]) if rank == 0 else 0, os.path.getsize(torch_path)]
        sizes = torch.tensor(sizes, dtype=torch.int64)
        dist.all_reduce(sizes)
        dist.barrier()
    finally:
        if rank == 0:
            shutil.rmtree(work, ignore_errors=True)
    return {"raw": raw_bytes(state) * RANKS, "saves": saves, "restores": restores,
            "ours_bytes": int(sizes[0]), "torch_bytes": int(sizes[1])}


def scaling(directory, dtype, mib, repeats, rank):
    """The save time of 1, 2 and 4 ranks holding the same total state (RANKS × mib MiB) between them."""
    times = {}
    for world in (1, 2, 4):
        group = dist.new_group(list(range(world)))  # every rank takes part in creating it
        work = shared_dir(directory, rank)
        try:
            if rank < world:
                state = model_state(mib * RANKS // world, dtype)
                saver = tw.Saver(shards(state, rank, world), max_to_keep=1, collective=TorchCollective(group))
            step = [0]

            def save():
                if rank < world:
                    step[0] += 1
                    saver.save(os.path.join(work, "model.ckpt"), global_step=step[0])

            dist.barrier()
            times[world] = best_of(repeats, {"trainwatch": job_wide(save)})["trainwatch"][0]
        finally:
            dist.barrier()
            if rank == 0:
                shutil.rmtree(work, ignore_errors=True)
    return times


def rank_main(rank, port, mib, repeats, disk):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=RANKS,
                            timeout=TIMEOUT)
    results = []
    for where, directory in (("tmpfs", "/dev/shm"), ("disk", disk)):
        for dtype in ("float32", "bfloat16"):
            cell = compare(directory, dtype, mib, repeats, rank)
            cell.update(where=where, directory=directory, dtype=dtype,
                        scaling=scaling(directory, dtype, mib, repeats, rank))
            results.append(cell)
    if rank == 0:
        print(json.dumps(results), flush=True)
    dist.barrier()


def report(cell, mib):
    raw = cell["raw"]

    def gbs(seconds):
        return raw / seconds / 1e9

    def line(what, anchor, theirs, mine, target=None):
        (anchor_s, anchor_cpu), (ours_s, ours_cpu) = theirs, mine
        goal = f" (target >= {target})" if target else ""
        return (f"  {what:8s} {anchor:17s} {gbs(anchor_s):5.2f} GB/s [{anchor_s * 1e3:4.0f} ms, {anchor_cpu * 1e3:3.0f} CPU]"
                f"   trainwatch {gbs(ours_s):5.2f} GB/s [{ours_s * 1e3:4.0f} ms, {ours_cpu * 1e3:3.0f} CPU]   ratio "
                f"{anchor_s / ours_s:4.2f}x{goal}")

    saves, restores = cell["saves"], cell["restores"]
    ours = saves["trainwatch"][0]
    print(f"{cell['where']} {cell['dtype']} ({RANKS} ranks x {raw // RANKS >> 20} MiB = {raw >> 20} MiB, "
          f"{cell['directory']}):")
    print(line("save", "torch.save", saves["torch.save"], saves["trainwatch"], SAVE_TARGET))
    print(line("save", "torch.save+fsync", saves["torch.save+fsync"], saves["trainwatch"], SAVE_TARGET))
    print(line("save", "parts alone", saves["parts alone"], saves["trainwatch"])
          + f"   commit {(ours - saves['parts alone'][0]) * 1e3:+.0f} ms")
    print(line("restore", "torch.load", restores["torch.load"], restores["trainwatch"], RESTORE_TARGET))
    print(line("restore", "torch.load+copy_", restores["torch.load+copy_"], restores["trainwatch"]))
    print(f"  size     torch/raw {cell['torch_bytes'] / raw:.3f}   trainwatch/raw {cell['ours_bytes'] / raw:.3f}   "
          f"ratio {cell['torch_bytes'] / cell['ours_bytes']:.2f}x (target trainwatch/raw <= "
          f"{SIZE_TARGETS[cell['dtype']]})")
    times = {int(world): seconds for world, seconds in cell["scaling"].items()}
    print("  scaling  same total state: " + "   ".join(
        f"{world} rank{'s' if world > 1 else ''} {times[world] * 1e3:5.0f} ms ({gbs(times[world]):5.2f} GB/s)"
        for world in sorted(times)) + f"   ratio 1→{RANKS} {times[1] / times[RANKS]:4.2f}x")


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    disk = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("TW_BENCH_DISK_DIR", "/var/tmp")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    print(f"sharded checkpoints, {RANKS} ranks over Gloo, best of {repeats}; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores at the start", flush=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    ranks = [subprocess.Popen([sys.executable, __file__, "--rank", str(rank), str(port), str(mib), str(repeats), disk],
                              env=env, stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL)
             for rank in range(RANKS)]
    output = ranks[0].communicate()[0]
    codes = [rank.wait() for rank in ranks]
    if any(codes):
        sys.exit(f"a rank failed: exit codes {codes}")
    for cell in json.loads(output):
        report(cell, mib)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--rank":
        rank_main(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    else:
        main()
