"""The per-run cost of the vote over torch.distributed/Gloo, against a bare allreduce of the same int64
vector in the same run (docs/performance/vote.md's target: the vote costs at most 1.2x the bare allreduce).

For 2 and 4 ranks on 127.0.0.1 (processes, Gloo): every rank times, in alternating rounds,
  anchor: torch.distributed.all_reduce(t, MAX) of an int64 tensor as long as the session's vote vector;
  ours:   the extra cost per run of a MonitoredSession with a TorchCollective over the same session
          without one (same empty step, no hooks) — what the vote adds: the library's vote, the bridge
          into Python, TorchCollective, the same Gloo allreduce;
and rank 0 prints the medians of the rounds and ours / anchor.

usage: PYTHONPATH=<build>/bindings/python bench_vote_gloo.py [runs_per_round] [rounds]
"""
import datetime
import os
import socket
import statistics
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing

import trainwatch as tw
from trainwatch.distributed import TorchCollective


def empty_step(ctx):
    return None


class Measuring(TorchCollective):
    """Learns the length of the vote vector (the bare allreduce must match it)."""

    vote_length = None

    def allreduce_int64(self, values, op, timeout):
        Measuring.vote_length = len(values)
        super().allreduce_int64(values, op, timeout)


def per_run(session, runs):
    start = time.perf_counter()
    for _ in range(runs):
        session.run(empty_step)
    return (time.perf_counter() - start) / runs


def rank_main(rank, world_size, port, runs, rounds, results):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=120))
    with tw.MonitoredSession(collective=Measuring()) as probe:
        probe.run(empty_step)
    tensor = torch.zeros(Measuring.vote_length, dtype=torch.int64)
    voting = tw.MonitoredSession(collective=TorchCollective())
    alone = tw.MonitoredSession()
    anchors, ours = [], []
    for _ in range(rounds):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(runs):
            dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        anchors.append((time.perf_counter() - start) / runs)
        dist.barrier()
        with_vote = per_run(voting, runs)
        ours.append(with_vote - per_run(alone, runs))
    voting.close()
    alone.close()
    if rank == 0:
        results.put((Measuring.vote_length, statistics.median(anchors), statistics.median(ours)))
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    runs = int(argv[0]) if argv else 2000
    rounds = int(argv[1]) if len(argv) > 1 else 5
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    context = torch.multiprocessing.get_context("spawn")
    print(f"vote vs bare Gloo allreduce, 127.0.0.1, median of {rounds} rounds of {runs} runs; {os.cpu_count()} cores")
    for world_size in (2, 4):
        results = context.SimpleQueue()
        torch.multiprocessing.start_processes(rank_main, args=(world_size, free_port(), runs, rounds, results),
                                              nprocs=world_size, join=True, start_method="spawn")
        length, anchor, ours = results.get()
        print(f"{world_size} ranks, {length} int64: anchor (bare all_reduce) {anchor * 1e6:8.1f} us   "
              f"ours (vote per run) {ours * 1e6:8.1f} us   ratio {ours / anchor:.2f}x")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv[1:]))
