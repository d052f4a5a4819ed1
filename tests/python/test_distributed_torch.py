"""Many ranks, one training run, over torch.distributed: 4 Gloo ranks on 127.0.0.1, one process each
(distributed_ranks.py), one test per agreement rule of docs/tf-semantics.md (D…). The scenarios that
leave the job healthy share one job (starting processes that import torch is the slow part); the two
that break it have a job each. Every job is bounded (distributed_world.JOB_LIMIT_SECS): a hang fails."""
import pytest

import trainwatch as tw

from distributed_ranks import TIMEOUT_SECS
from distributed_world import run_gloo

torch_distributed = pytest.importorskip("torch.distributed")
if not torch_distributed.is_available():
    pytest.skip("torch has no distributed support", allow_module_level=True)

HEALTHY = ["stop", "nan_fail", "nan_rollback", "nan_loss_on_save", "abort", "sigterm", "mismatch"]


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("gloo")
    return workdir, run_gloo(HEALTHY, workdir)


def checkpoint_step(path):
    return int(str(path).rsplit("-", 1)[1])


def test_stop_on_one_rank_stops_all_after_the_same_run_D5(healthy):
    for report in healthy[1]["stop"].values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"] == [1, 2, 3, 4, 5]  # rank 1 asked in the run ending at 5; nobody ran on
        assert report["w"] == [5.0] * 4


def test_nan_on_rank_2_fails_every_rank_naming_rank_tensor_step_index_D7(healthy):
    for rank, report in healthy[1]["nan_fail"].items():
        assert report["error"] == "NanLossDuringTrainingError", report
        # The run from step 4 was the last everywhere (rank 2's own later hooks did not see its end).
        assert report["steps"] == ([1, 2, 3, 4] if rank == 2 else [1, 2, 3, 4, 5])
        message = report["message"]
        assert "rank 2 of 4" in message and "'loss'" in message and "step 4" in message and "index 0" in message


def test_nan_on_rank_2_rolls_every_rank_back_to_the_same_step_D7(healthy):
    reports = healthy[1]["nan_rollback"]
    for report in reports.values():
        assert report["error"] is None, report["traceback"]
        # Rank 2's weights went NaN in the run from step 6; checkpoints every 2 steps: every rank back to 6.
        assert report["steps"] == [1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12]
        assert report["w"] == [12.0] * 4  # rank 2 too: it took the chief's checkpoint, not its NaNs


def test_a_rollback_never_lands_on_the_checkpoint_of_the_nan_run_D7_B48(healthy):
    workdir, reports = healthy[0], healthy[1]["nan_loss_on_save"]
    for report in reports.values():
        assert report["error"] is None, report["traceback"]
        # Rank 2's loss was NaN in the run from step 5, which the chief's hook saved as model.ckpt-6
        # first: every rank goes back to model.ckpt-4, the newest checkpoint written before that run.
        assert report["steps"] == [1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9, 10, 11, 12]
        assert report["w"] == [12.0] * 4
    latest = tw.latest_checkpoint(workdir / "nan_loss_on_save" / "ckpt")
    assert checkpoint_step(latest) == 12
    assert tw.load_variable(latest, "w").tolist() == [12.0] * 4


def test_aborted_on_one_rank_recovers_every_rank_to_the_same_step_D8(healthy):
    for report in healthy[1]["abort"].values():
        assert report["error"] is None, report["traceback"]
        # Rank 1 aborted in the run from step 5; the chief's run saved step 6 before the vote: every rank
        # re-created its session from that checkpoint.
        assert report["creations"] == [0, 6], report
        assert report["steps"][-1] == 12
        assert report["w"] == [12.0] * 4


def test_sigterm_on_one_rank_saves_every_rank_at_the_same_step_D10(healthy):
    workdir, reports = healthy
    for report in reports["sigterm"].values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"][-1] == 6, report["steps"]  # the signal came in the run from step 5
        assert report["preempted"] is True
    latest = tw.latest_checkpoint(workdir / "sigterm" / "ckpt")
    assert checkpoint_step(latest) == 6
    assert tw.load_variable(latest, "w").tolist() == [6.0] * 4


def test_mismatched_restored_steps_are_a_clear_error_D3(healthy):
    for report in healthy[1]["mismatch"].values():
        assert report["error"] == "FailedPreconditionError", report
        assert "rank 1 of 4: restored global step 11" in report["message"], report["message"]
        assert report["steps"] == []  # no rank trained


def test_a_killed_rank_fails_the_others_within_the_timeout_D9(tmp_path):
    reports = run_gloo(["kill"], tmp_path, missing_ok={3})["kill"]
    assert 3 not in reports  # SIGKILL: no report
    for report in reports.values():
        assert report["error"] in ("UnavailableError", "DeadlineExceededError"), report
        assert report["ended"] - report["started"] < 3 * TIMEOUT_SECS + 30
        # Rank 3 died in the run from step 7: the others finished it (Gloo told them at the vote: a
        # killed peer closes its connections, UnavailableError well before the timeout).
        assert report["steps"][-1] == 8
    # Nothing on disk is lost: the chief's latest checkpoint (saved in that last run) restores.
    latest = tw.latest_checkpoint(tmp_path / "kill" / "ckpt")
    assert checkpoint_step(latest) == 8
    assert tw.load_variable(latest, "w").tolist() == [8.0] * 4


def test_a_collective_that_raises_is_a_clear_error_and_loses_nothing_D9(tmp_path):
    reports = run_gloo(["collective_raises"], tmp_path)["collective_raises"]
    assert reports[1]["error"] == "ValueError"  # the exception of the user's collective, unchanged
    assert "injected failure of the collective" in reports[1]["message"]
    for rank in (0, 2, 3):
        assert reports[rank]["error"] in ("UnavailableError", "DeadlineExceededError"), reports[rank]
    latest = tw.latest_checkpoint(tmp_path / "collective_raises" / "ckpt")
    assert tw.load_variable(latest, "w").tolist() == [float(checkpoint_step(latest))] * 4
