"""Sharded checkpoints of a job of 4 ranks (docs/performance/sharded.md), against what PyTorch users do without DCP: every
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
  glibc's heap without a page fault after the first run, larger ones are mapped afresh each time;
- restore at a job's start, as a job restores: for each repeat and contender a fresh job of 4 processes
  builds its state (the model's own tensors, touched), then times one restore of a checkpoint written
  beforehand (page cache warm, as for the repeated runs): saver.restore, torch.load, torch.load + copy_.
  Best of the repeats; here torch.load's tensors are fresh memory and pay their page faults;
- size: the checkpoint's files (index + parts) / raw bytes, and torch's files / raw bytes;
- scaling: the save time of 1, 2 and 4 ranks holding the same total state (4 × 64 MiB) between them.
Each line prints the anchor, trainwatch and their ratio, with rank 0's CPU time (all its threads) of
the best run: on a shared machine the wall time of 4 ranks on 2 cores is mostly whose turn it was.
Each rank of trainwatch's sharded saver uses its share of the cores (checkpoint/io/parallel.h: one thread
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
import time

import torch
import torch.distributed as dist

import trainwatch as tw
from trainwatch.distributed import TorchCollective

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_checkpoint import best_of, cpu_seconds, fsync_path, model_state  # noqa: E402  (the shared generator)

RANKS = 4
SAVE_TARGET = 1.3     # docs/performance/sharded.md: sharded save >= 1.3x the per-rank torch.save baseline's throughput
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


CONTENDERS_AT_START = ("trainwatch", "torch.load", "torch.load+copy_")


def init_job(rank, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=RANKS,
                            timeout=TIMEOUT)


def start_files(work, rank):
    return os.path.join(work, "model.ckpt"), os.path.join(work, f"shard{rank}.pt")


def prepare_start(rank, port, mib, cells):
    """A job that writes, for every cell's directory, the sharded checkpoint and every rank's torch file."""
    init_job(rank, port)
    for work, dtype in cells:
        state = model_state(mib, dtype)
        prefix, torch_path = start_files(work, rank)
        tw.Saver(shards(state, rank, RANKS), max_to_keep=1, collective=TorchCollective()).save(prefix, global_step=1)
        torch.save(state, torch_path)
    dist.barrier()


def restore_at_start(rank, port, mib, contender, work, dtype):
    """A fresh job's one restore (rank 0 prints wall and CPU seconds, job-wide from barrier to barrier)."""
    init_job(rank, port)
    state = model_state(mib, dtype)  # the model, built: its tensors are touched memory
    prefix, torch_path = start_files(work, rank)
    if contender == "trainwatch":
        saver = tw.Saver(shards(state, rank, RANKS), max_to_keep=1, collective=TorchCollective())
        restore = lambda: saver.restore(prefix + "-1")  # noqa: E731
    elif contender == "torch.load":
        restore = lambda: torch.load(torch_path)  # noqa: E731
    else:
        def restore():
            for name, value in torch.load(torch_path).items():
                state[name].copy_(value)
    dist.barrier()
    cpu, start = cpu_seconds(), time.perf_counter()
    restore()
    dist.barrier()
    wall = time.perf_counter() - start
    if rank == 0:
        print(json.dumps([wall, cpu_seconds() - cpu]), flush=True)
    dist.barrier()


def run_job(*args):
    """Runs this file as a job of RANKS processes with `args`; rank 0's standard output."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    ranks = [subprocess.Popen([sys.executable, __file__, "--rank", str(rank), str(port)] + [str(a) for a in args],
                              env=env, stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL)
             for rank in range(RANKS)]
    output = ranks[0].communicate()[0]
    codes = [rank.wait() for rank in ranks]
    if any(codes):
        sys.exit(f"a rank failed: exit codes {codes} ({args})")
    return output


def restores_at_start(mib, repeats, disk):
    """{(where, dtype): {contender: (best wall s, CPU s)}}: contenders in turn, each in fresh jobs."""
    cells = [(where, directory, dtype) for where, directory in (("tmpfs", "/dev/shm"), ("disk", disk))
             for dtype in ("float32", "bfloat16")]
    works = {(where, dtype): tempfile.mkdtemp(prefix="bench_sharded.start.", dir=directory)
             for where, directory, dtype in cells}
    try:
        run_job("--prepare", mib, *[x for (_, dtype), work in works.items() for x in (work, dtype)])
        best = {cell: {name: (float("inf"), 0.0) for name in CONTENDERS_AT_START} for cell in works}
        for _ in range(repeats):
            for cell, work in works.items():
                for name in CONTENDERS_AT_START:
                    wall, cpu = json.loads(run_job("--start", mib, name, work, cell[1]))
                    if wall < best[cell][name][0]:
                        best[cell][name] = (wall, cpu)
        return best
    finally:
        for work in works.values():
            shutil.rmtree(work, ignore_errors=True)


def rank_main(rank, port, mib, repeats, disk):
    init_job(rank, port)
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


def report(cell, mib, at_start):
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
    start = at_start[(cell["where"], cell["dtype"])]
    print(line("at start", "torch.load", start["torch.load"], start["trainwatch"], RESTORE_TARGET)
          + "   (fresh jobs)")
    print(line("at start", "torch.load+copy_", start["torch.load+copy_"], start["trainwatch"]) + "   (fresh jobs)")
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
    print(f"sharded checkpoints, {RANKS} ranks over Gloo, best of {repeats}; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores at the start", flush=True)
    cells = json.loads(run_job("--compare", mib, repeats, disk))
    at_start = restores_at_start(mib, repeats, disk)
    for cell in cells:
        report(cell, mib, at_start)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--rank":
        rank, port, mode, args = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
        if mode == "--compare":
            rank_main(rank, port, int(args[0]), int(args[1]), args[2])
        elif mode == "--prepare":
            prepare_start(rank, port, int(args[0]), list(zip(args[1::2], args[2::2])))
        else:
            restore_at_start(rank, port, int(args[0]), args[1], args[2], args[3])
    else:
        main()
