#!/usr/bin/env python3
"""The agreement rules (docs/tf-semantics.md D…) under `mpirun -np 4 --oversubscribe`, ranks as processes
over libtrainwatch_mpi (TAP output). Each scenario runs in a fresh checkpoint directory, bounded in time.

usage: run_mpi_scenarios.py MPIRUN MPI_SCENARIO LIBTRAINWATCH
"""
import os
import re
import subprocess
import sys
import tempfile
import time

mpirun, program, libtrainwatch = sys.argv[1:4]
RANKS = 4
LINE = re.compile(r"^rank (\d+) create=(\S+) run=(\S+) close=(\S+) step=(-?\d+) w=(\S+) runs=(\d+) "
                  r"creations=(\d+) preempted=(\d) vanished=(\d) \| (.*)$")
results = []  # (ok, name, detail)


def check(name, ok, detail=""):
    results.append((bool(ok), name, detail))


def run(scenario, limit=120):
    """Runs a scenario on 4 ranks; returns (exit code, seconds, {rank: fields}, restored step, output)."""
    with tempfile.TemporaryDirectory(prefix="tw_mpi_") as directory:
        start = time.monotonic()
        try:
            done = subprocess.run([mpirun, "-np", str(RANKS), "--oversubscribe", "--bind-to", "none", program,
                                   scenario, directory], capture_output=True, text=True, timeout=limit)
            code, out = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as e:
            code, out = None, f"mpirun did not finish within {limit} s: {e.stdout!r}"
        seconds = time.monotonic() - start
        ranks = {}
        for line in out.splitlines():
            m = LINE.match(line)
            if m:
                r = int(m.group(1))
                ranks[r] = dict(create=m.group(2), run=m.group(3), close=m.group(4), step=int(m.group(5)),
                                w=float(m.group(6)), runs=int(m.group(7)), creations=int(m.group(8)),
                                preempted=int(m.group(9)), vanished=int(m.group(10)), message=m.group(11))
        restored = subprocess.run([program, "restored", directory], capture_output=True, text=True, timeout=60)
        m = re.search(r"restored (-?\d+)", restored.stdout)
        return code, seconds, ranks, int(m.group(1)) if m else None, out


def all_stopped_at(name, ranks, step, out, **fields):
    ok = len(ranks) == RANKS and all(
        r["create"] == r["run"] == r["close"] == "TW_OK" and r["step"] == step and r["w"] == step and
        all(r[k] == v for k, v in fields.items()) for r in ranks.values())
    check(name, ok, out)


# D5: a stop on rank 3 stops every rank after the same run.
code, _, ranks, _, out = run("stop")
all_stopped_at("D5 stop on rank 3 stops all 4 ranks after the same run (step 5)", ranks, 5, out, runs=5)

# D7: NaN on rank 2 only, TW_NAN_ACTION_FAIL: every rank fails with TW_NAN_LOSS naming rank 2.
code, _, ranks, restored, out = run("nan-fail")
check("D7 NaN on rank 2 fails all 4 ranks with TW_NAN_LOSS naming rank, tensor, step and index",
      len(ranks) == RANKS and all(r["run"] == "TW_NAN_LOSS" and "rank 2 of 4" in r["message"] and
                                  "tensor 'loss', step 3" in r["message"] and "first at index 0" in r["message"]
                                  for r in ranks.values()), out)

# D7: NaN on rank 2 only, TW_NAN_ACTION_ROLLBACK: every rank goes back to step 4 together.
code, _, ranks, _, out = run("nan-rollback")
all_stopped_at("D7 NaN on rank 2 rolls all 4 ranks back to the same checkpoint (9 runs to step 8)", ranks, 8, out,
               runs=9, creations=1)

# D8: TW_ABORTED on rank 1: every rank re-creates and restores the same checkpoint.
code, _, ranks, _, out = run("aborted")
all_stopped_at("D8 ABORTED on rank 1 makes all 4 ranks recover from the same checkpoint", ranks, 8, out,
               creations=2, runs=8)

# D10: SIGTERM to rank 1 (TW_OPT_CATCH_PREEMPTION_SIGNALS): every rank stops at the same step, the chief saves.
code, _, ranks, restored, out = run("sigterm")
all_stopped_at("D10 SIGTERM on rank 1 stops all 4 ranks at step 4, preempted", ranks, 4, out, preempted=1)
check("D10 the preemption checkpoint of step 4 restores", restored == 4, f"restored {restored}\n{out}")

# D9: a rank killed with SIGKILL: no hang — mpirun ends the job, or the others fail within the timeout —
# and the newest checkpoint restores with consistent replicas.
code, seconds, ranks, restored, out = run("sigkill", limit=90)
check("D9 SIGKILL on rank 2: the job ends without hanging (no rank reports success)",
      code not in (None, 0) and all(r["run"] in ("TW_DEADLINE_EXCEEDED", "TW_UNAVAILABLE") for r in ranks.values()),
      f"exit {code} after {seconds:.1f} s\n{out}")
check("D9 after the SIGKILL the newest checkpoint restores (step 4 or 6)", restored in (4, 6),
      f"restored {restored}")

# D9: a rank that stops answering (alive, silent): the others fail with TW_DEADLINE_EXCEEDED naming the vote.
code, seconds, ranks, restored, out = run("silent", limit=90)
others = [r for n, r in ranks.items() if n != 3]
# The first rank to time out leaves, and mpirun then ends the job: the others may not get to report.
check("D9 a silent rank 3: the others fail with TW_DEADLINE_EXCEEDED naming the vote, the timeout and a silent peer",
      others and all(r["run"] == "TW_DEADLINE_EXCEEDED" and "collective allreduce at the end of run 6" in r["message"]
                     and "did not complete within 2.000 s: rank" in r["message"] and "of the 4 ranks did not answer"
                     in r["message"] for r in others), out)
check("D9 after the silent rank the newest checkpoint restores (step 6)", restored == 6, f"restored {restored}")

# The core library never links MPI.
ldd = subprocess.run(["ldd", libtrainwatch], capture_output=True, text=True).stdout
check("libtrainwatch does not link MPI (ldd)", "mpi" not in ldd.lower(), ldd)

print(f"1..{len(results)}")
for i, (ok, name, detail) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    if not ok:
        for line in str(detail).splitlines()[-40:]:
            print(f"# {line}")
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
