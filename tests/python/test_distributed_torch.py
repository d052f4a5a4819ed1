"""Many ranks, one training run, over torch.distributed: 4 Gloo ranks on 127.0.0.1, one process each
(distributed_ranks.py), one test per agreement rule of docs/tf-semantics.md (D…). Each job is bounded
(distributed_world.JOB_LIMIT_SECS) so that a hang fails the test instead of stalling the suite."""
import pytest

import trainwatch as tw

from distributed_ranks import TIMEOUT_SECS
from distributed_world import run_gloo

torch_distributed = pytest.importorskip("torch.distributed")
if not torch_distributed.is_available():
    pytest.skip("torch has no distributed support", allow_module_level=True)

RANKS = range(4)


def final_step(reports):
    return {rank: report["steps"][-1] for rank, report in reports.items()}


def test_stop_on_one_rank_stops_all_after_the_same_run_D5(tmp_path):
    reports = run_gloo("stop", tmp_path)
    for report in reports.values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"] == [1, 2, 3, 4, 5]  # rank 1 asked after step 5; nobody ran step 6
    assert len({tuple(r["w"]) for r in reports.values()}) == 1


def test_nan_on_rank_2_fails_every_rank_naming_it_D6(tmp_path):
    reports = run_gloo("nan_fail", tmp_path)
    for report in reports.values():
        assert report["error"] == "NanLossDuringTrainingError", report
        assert report["steps"] == [1, 2, 3, 4]  # the run of step 4 was the last everywhere
        message = report["message"]
        assert "rank 2" in message and "loss" in message and "step 4" in message and "index 0" in message


def test_nan_on_rank_2_rolls_every_rank_back_to_the_same_step_D7(tmp_path):
    reports = run_gloo("nan_rollback", tmp_path)
    sequences = {tuple(report["steps"]) for report in reports.values()}
    assert len(sequences) == 1, sequences
    steps = sequences.pop()
    # The NaN came in the run that started at step 7; checkpoints every 2 steps: back to step 6.
    assert steps[:8] == (1, 2, 3, 4, 5, 6, 7, 6), steps
    for report in reports.values():
        assert report["error"] is None, report["traceback"]
        assert report["w"] == reports[0]["w"]  # the same weights everywhere at the end
        assert report["steps"][-1] == 12


def test_aborted_on_one_rank_recovers_every_rank_to_the_same_step_D8(tmp_path):
    reports = run_gloo("abort", tmp_path)
    for report in reports.values():
        assert report["error"] is None, report["traceback"]
        # Created at 0, then re-created after the abort in the run of step 5, from the checkpoint of step 4.
        assert report["creations"] == [0, 4], report
        assert report["steps"][-1] == 12
        assert report["w"] == reports[0]["w"]


def test_a_killed_rank_fails_the_others_within_the_timeout_D9(tmp_path):
    reports = run_gloo("kill", tmp_path, missing_ok={3})
    assert 3 not in reports  # SIGKILL: no report
    for report in reports.values():
        assert report["error"] in ("UnavailableError", "DeadlineExceededError"), report
        assert report["ended"] - report["started"] < 3 * TIMEOUT_SECS
        assert report["steps"][-1] <= 7
    # Nothing on disk is lost: the chief's latest checkpoint restores.
    latest = tw.latest_checkpoint(tmp_path / "ckpt")
    assert latest is not None and latest.endswith("-6")
    assert tw.load_variable(latest, "w").tolist() == [6.0] * 4


def test_sigterm_on_one_rank_saves_every_rank_at_the_same_step_D10(tmp_path):
    reports = run_gloo("sigterm", tmp_path)
    for report in reports.values():
        assert report["error"] is None, report["traceback"]
        assert report["steps"][-1] == 5, report["steps"]  # the signal came during the run of step 5
        assert report["preempted"] is True
    latest = tw.latest_checkpoint(tmp_path / "ckpt")
    assert latest.endswith("-5")
    assert tw.load_variable(latest, "w").tolist() == [5.0] * 4


def test_mismatched_restored_steps_are_a_clear_error_D3(tmp_path):
    reports = run_gloo("mismatch", tmp_path)
    for report in reports.values():
        assert report["error"] is not None, report
        assert "step" in report["message"], report["message"]
        assert report["steps"] == []  # no rank trained


def test_a_collective_that_raises_is_a_clear_error_and_loses_nothing_D11(tmp_path):
    reports = run_gloo("collective_raises", tmp_path)
    assert reports[1]["error"] == "ValueError"  # the exception of the user's collective, unchanged
    assert "injected failure of the collective" in reports[1]["message"]
    for rank in (0, 2, 3):
        assert reports[rank]["error"] in ("UnavailableError", "DeadlineExceededError"), reports[rank]
    latest = tw.latest_checkpoint(tmp_path / "ckpt")
    step = int(latest.rsplit("-", 1)[1])
    assert tw.load_variable(latest, "w").tolist() == [float(step)] * 4
