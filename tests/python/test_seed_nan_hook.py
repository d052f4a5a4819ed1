"""The seed program: a TF1 user's own NaN hook — NanTensorHookCustom, a NanTensorHook subclass
overriding after_run — under MonitoredTrainingSession with a small PyTorch model, run from
bindings/python/examples/ as it is shipped: with super().after_run the built-in check fails training
(B33) after the custom action ran; without it the custom action alone runs and training goes on."""
import pathlib
import sys

import numpy as np
import pytest

import trainwatch as tw

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "bindings" / "python" / "examples"


@pytest.fixture(scope="module")
def seed():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import train_custom_nan_hook
        yield train_custom_nan_hook
    finally:
        sys.path.remove(str(EXAMPLES))


def test_with_super_the_builtin_check_fails_training_after_the_custom_action_B33(seed, tmp_path):
    hook, reached, error = seed.train(tmp_path, steps=40, nan_at=10, builtin_check=True)
    assert isinstance(error, tw.NanLossDuringTrainingError)
    assert hook.nan_steps == [11] and reached == 10  # the NaN run is step 10 → 11; no run after it
    saved = np.load(hook.diagnostics[0])
    assert np.isnan(saved["loss"]) and set(saved.files) == {"loss", "weight", "bias"}


def test_without_super_only_the_custom_action_runs_and_training_goes_on(seed, tmp_path):
    hook, reached, error = seed.train(tmp_path, steps=40, nan_at=10, builtin_check=False)
    assert error is None and reached == 40
    assert hook.nan_steps == list(range(11, 41))  # the model stays NaN: every later run is reported
    assert len(hook.diagnostics) == 1


def test_the_example_runs_as_a_program(seed, tmp_path, capsys):
    assert seed.main(["--steps", "15", "--nan-at", "3", "--dir", str(tmp_path)]) == 1
    assert "NanLossDuringTrainingError" in capsys.readouterr().out
    assert seed.main(["--steps", "15", "--nan-at", "3", "--without-builtin-check", "--dir", str(tmp_path / "b")]) == 0
