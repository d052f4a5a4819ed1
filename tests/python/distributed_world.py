"""Runs a scenario of distributed_ranks.py as a job of ranks, bounded in time: 4 Gloo ranks on 127.0.0.1
(one process each) or `mpirun -np 4 --oversubscribe`. A job that outlives its limit is killed and fails
the test instead of stalling the suite."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

RANKS_SCRIPT = pathlib.Path(__file__).with_name("distributed_ranks.py")
JOB_LIMIT_SECS = 120  # the whole job; each collective operation inside has its own, shorter timeout
PYTHON = "/usr/bin/python3"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the package under test, as pytest sees it
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _reports(workdir, scenarios, world_size, missing_ok=()):
    """{scenario: {rank: report}}; ranks in missing_ok may have died without one."""
    reports = {}
    for scenario in scenarios:
        reports[scenario] = {}
        for rank in range(world_size):
            path = workdir / scenario / f"rank{rank}.json"
            if rank in missing_ok and not path.exists():
                continue
            assert path.exists(), f"rank {rank} wrote no report for {scenario}"
            reports[scenario][rank] = json.loads(path.read_text())
    return reports


def _fail_hung(what, procs):
    """Dumps the stacks of the ranks still running (distributed_ranks.py registers SIGUSR2), then kills them."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGUSR2)
    outputs = []
    for rank, proc in enumerate(procs):
        try:
            out = proc.communicate(timeout=5)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            out = proc.communicate()[0]
        outputs.append(f"--- rank {rank}:\n" + (out or b"").decode(errors="replace")[-3000:])
    pytest.fail(f"{what} did not end within {JOB_LIMIT_SECS} s: a hang\n" + "\n".join(outputs))


def run_gloo(scenarios, workdir, world_size=4, missing_ok=(), script=RANKS_SCRIPT):
    """Runs `scenarios` (of `script`, which calls distributed_ranks.main) one after the other in one job
    over torch.distributed/Gloo."""
    port = free_port()
    procs = [subprocess.Popen([PYTHON, str(script), ",".join(scenarios), str(rank), str(world_size),
                               str(port), str(workdir)], env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
             for rank in range(world_size)]
    deadline = time.monotonic() + JOB_LIMIT_SECS
    outputs = []
    for proc in procs:
        try:
            outputs.append(proc.communicate(timeout=max(deadline - time.monotonic(), 1))[0].decode(errors="replace"))
        except subprocess.TimeoutExpired:
            _fail_hung(f"Gloo job {','.join(scenarios)}", procs)
    for rank, (proc, output) in enumerate(zip(procs, outputs)):
        if rank not in missing_ok:
            assert proc.returncode == 0, f"rank {rank} exited with {proc.returncode}:\n{output}"
    return _reports(workdir, scenarios, world_size, missing_ok)


def mpirun():
    return shutil.which("mpirun")


def run_mpi(scenarios, workdir, world_size=4):
    env = _env()
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,tcp",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    command = [mpirun(), "-np", str(world_size), "--oversubscribe", PYTHON, str(RANKS_SCRIPT), ",".join(scenarios),
               "mpi", "-", "-", str(workdir)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output = proc.communicate(timeout=JOB_LIMIT_SECS)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # mpirun and the ranks it started
        proc.communicate()
        pytest.fail(f"mpirun job {','.join(scenarios)} did not end within {JOB_LIMIT_SECS} s: a hang")
    assert proc.returncode == 0, output.decode(errors="replace")
    return _reports(workdir, scenarios, world_size)
