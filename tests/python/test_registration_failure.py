"""A rank whose registration of its variables fails, in a job of 2 Gloo ranks (registration_ranks.py):
every rank's MonitoredTrainingSession or Saver raises at once — the failing rank its own exception, the
other an error with the failing rank's status naming it and quoting its reason — instead of the other
waiting out collective_timeout_secs (an hour here: waiting would hang the job past the harness's limit,
D1). And the chief's failed preparation of a sharded save's directory reaches every rank (D17)."""
import pathlib

import pytest

import trainwatch as tw

from distributed_world import run_gloo

torch = pytest.importorskip("torch")
torch_distributed = pytest.importorskip("torch.distributed")

SCRIPT = pathlib.Path(__file__).with_name("registration_ranks.py")

# scenario → (rank 1's own exception and a piece of its message, the status rank 0 raises)
SCENARIOS = {
    "session_outside": ("InvalidArgumentError", "shard 'w' dimension 0", "InvalidArgumentError"),
    "session_overflow": ("ValueError", "offset must hold int64", "InvalidArgumentError"),
    "saver_strided": ("InvalidArgumentError", "'w' is not contiguous", "InvalidArgumentError"),
    "saver_dtype": ("TypeError", "element type trainwatch does not know", "InvalidArgumentError"),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    if not torch_distributed.is_available():
        pytest.skip("torch has no distributed support")
    return run_gloo(list(SCENARIOS) + ["chief_cannot_prepare"], tmp_path_factory.mktemp("registration"),
                    world_size=2, script=SCRIPT)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_d1_a_failed_registration_raises_on_every_rank_naming_it(reports, scenario):
    own_error, reason, others_error = SCENARIOS[scenario]
    failing, healthy = reports[scenario][1], reports[scenario][0]
    assert failing["error"] == own_error, failing
    assert reason in failing["message"]
    assert healthy["error"] == others_error, healthy  # not DeadlineExceededError: it did not wait
    assert healthy["message"].startswith("rank 1 of 2: "), healthy["message"]
    assert reason in healthy["message"]


def test_d17_every_rank_hears_why_the_chief_could_not_prepare_the_directory(reports):
    for rank, report in reports["chief_cannot_prepare"].items():
        assert report["error"] == "FailedPreconditionError", (rank, report)
        assert "rank 0 of 2: " in report["message"] and "is in use" in report["message"], (rank, report["message"])
