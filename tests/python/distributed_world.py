"""Runs a scenario of distributed_ranks.py as a job of ranks, bounded in time: 4 Gloo ranks on 127.0.0.1
(one process each) or `mpirun -np 4 --oversubscribe`. A job that outlives its limit is killed and fails
the test instead of stalling the suite."""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

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


def _reports(workdir, world_size, missing_ok=()):
    reports = {}
    for rank in range(world_size):
        path = workdir / f"rank{rank}.json"
        if rank in missing_ok and not path.exists():
            continue
        assert path.exists(), f"rank {rank} wrote no report"
        reports[rank] = json.loads(path.read_text())
    return reports


def run_gloo(scenario, workdir, world_size=4, missing_ok=()):
    """{rank: report} of `scenario` over torch.distributed/Gloo; ranks in missing_ok may die unreported."""
    port = free_port()
    procs = [subprocess.Popen([PYTHON, str(RANKS_SCRIPT), scenario, str(rank), str(world_size), str(port),
                               str(workdir)], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for rank in range(world_size)]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=JOB_LIMIT_SECS)[0].decode(errors="replace"))
    except subprocess.TimeoutExpired:
        for proc in procs:
            proc.kill()
        pytest.fail(f"scenario {scenario} did not end within {JOB_LIMIT_SECS} s: a hang")
    for rank, (proc, output) in enumerate(zip(procs, outputs)):
        if rank not in missing_ok:
            assert proc.returncode == 0, f"rank {rank} exited with {proc.returncode}:\n{output}"
    return _reports(workdir, world_size, missing_ok)


def mpirun():
    return shutil.which("mpirun")


def run_mpi(scenario, workdir, world_size=4):
    env = _env()
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,tcp",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    command = [mpirun(), "-np", str(world_size), "--oversubscribe", PYTHON, str(RANKS_SCRIPT), scenario, "mpi",
               "-", "-", str(workdir)]
    try:
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=JOB_LIMIT_SECS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"mpirun scenario {scenario} did not end within {JOB_LIMIT_SECS} s: a hang")
    assert done.returncode == 0, done.stdout.decode(errors="replace")
    return _reports(workdir, world_size)
