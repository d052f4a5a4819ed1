"""MPICollective (mpi4py) under `mpirun -np 4 --oversubscribe` on this host: the rules the Gloo tests
check, over MPI, in one job (distributed_ranks.py with "mpi" for the rank). Skipped when mpirun or
mpi4py is missing; running as root is allowed through OpenMPI's two environment variables."""
import pytest

from distributed_world import mpirun, run_mpi

pytest.importorskip("mpi4py")
if mpirun() is None:
    pytest.skip("mpirun is not installed (openmpi-bin)", allow_module_level=True)

SCENARIOS = ["stop", "nan_rollback", "abort", "sigterm"]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return run_mpi(SCENARIOS, tmp_path_factory.mktemp("mpi"))


def test_mpi_stop_on_one_rank_stops_all_after_the_same_run_D5(job):
    for report in job["stop"].values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"] == [1, 2, 3, 4, 5]


def test_mpi_nan_on_rank_2_rolls_every_rank_back_to_the_same_step_D7(job):
    for report in job["nan_rollback"].values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"] == [1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12]
        assert report["w"] == [12.0] * 4


def test_mpi_aborted_on_one_rank_recovers_every_rank_to_the_same_step_D8(job):
    for report in job["abort"].values():
        assert report["error"] is None, report["traceback"]
        assert report["creations"] == [0, 6]
        assert report["w"] == [12.0] * 4


def test_mpi_sigterm_on_one_rank_stops_every_rank_at_the_same_step_D10(job):
    for report in job["sigterm"].values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"][-1] == 6
        assert report["preempted"] is True
