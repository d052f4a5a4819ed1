"""The parity scenario (tests/parity/README.md) in Python: the trace must equal tests/parity/expected.txt
line for line, as it does for C (dlopen), Rust and Go."""
import math
import pathlib

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import native

EXPECTED = pathlib.Path(__file__).resolve().parents[1] / "parity" / "expected.txt"

# tw_status_name() spellings, by code (the native module's TW_* constants also hold option keys).
STATUS_NAMES = {getattr(native, name): name for name in (
    "TW_OK", "TW_CANCELLED", "TW_UNKNOWN", "TW_INVALID_ARGUMENT", "TW_DEADLINE_EXCEEDED", "TW_NOT_FOUND",
    "TW_ALREADY_EXISTS", "TW_PERMISSION_DENIED", "TW_RESOURCE_EXHAUSTED", "TW_FAILED_PRECONDITION",
    "TW_ABORTED", "TW_OUT_OF_RANGE", "TW_UNIMPLEMENTED", "TW_INTERNAL", "TW_UNAVAILABLE", "TW_DATA_LOSS",
    "TW_UNAUTHENTICATED", "TW_NAN_LOSS", "TW_IO", "TW_STOP_ITERATION", "TW_CALLBACK_FAILED")}


def expected_sections():
    sections, current = {}, None
    for line in EXPECTED.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
        else:
            current.append(line)
    return sections


def number(value):
    value = float(value)
    return "nan" if math.isnan(value) else str(int(value))


def weights(w):
    return ",".join(number(v) for v in w)


class Counter(tw.SessionRunHook):
    """The counting hook of the scenario: first in every hook list."""

    def __init__(self, trace):
        self.trace = trace

    def begin(self):
        self.trace.append("begin")

    def after_create_session(self, session, coord):
        self.trace.append(f"after_create_session global_step={session.global_step}")

    def before_run(self, run_context):
        self.trace.append("before_run")
        return tw.SessionRunArgs({"loss": "loss", "global_step": "global_step"})

    def after_run(self, run_context, run_values):
        results = run_values.results
        self.trace.append(f"after_run loss={number(results['loss'])} global_step={number(results['global_step'])}")

    def end(self, session):
        self.trace.append(f"end global_step={session.global_step}")

    def on_error(self, session, error_code):
        self.trace.append(f"on_error {STATUS_NAMES[error_code]}")


class Model:
    """w: float32[4], registered zero copy; each step adds the feed x and publishes loss = sum(w)."""

    def __init__(self, trace):
        self.trace = trace
        self.w = np.zeros(4, np.float32)

    def step(self, ctx):
        x = ctx.feeds["x"]
        self.trace.append(f"step global_step={ctx.global_step} x={number(x)}")
        self.w += x
        return {"loss": np.array(self.w.sum(), np.float32)}

    def run(self, sess, x):
        try:
            sess.run(self.step, feed_dict={"x": np.array(x, np.float32)})
            self.trace.append("run TW_OK")
        except tw.OpError as error:
            self.trace.append(f"run {STATUS_NAMES[error.error_code]}")
            return error
        return None

    def close(self, sess):
        sess.close()
        self.trace.append("close TW_OK")


def session(model, hooks, checkpoint_dir=None):
    scaffold = tw.Scaffold(variables={"w": model.w})
    creator = tw.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir)
    return tw.MonitoredSession(creator, hooks)


@pytest.fixture(scope="module")
def expected():
    return expected_sections()


@pytest.fixture(scope="module")
def checkpoint_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("parity")


def test_parity_train(expected, checkpoint_dir):
    trace = []
    model = Model(trace)
    hooks = [Counter(trace), tw.StopAtStepHook(last_step=5),
             tw.CheckpointSaverHook(str(checkpoint_dir), save_steps=2, async_checkpoint=False)]
    sess = session(model, hooks, str(checkpoint_dir))
    while not sess.should_stop():
        assert model.run(sess, 1.0) is None
    trace.append(f"global_step={sess.global_step}")
    sess.close()
    trace.append("close TW_OK")
    trace.append(f"w={weights(model.w)}")
    trace.append(f"latest_checkpoint={pathlib.Path(tw.latest_checkpoint(str(checkpoint_dir))).name}")
    assert trace == expected["train"]


def test_parity_nan(expected):
    trace = []
    model = Model(trace)
    sess = session(model, [Counter(trace), tw.NanTensorHook("loss")])
    for x in (1.0, 1.0, float("nan"), 1.0):
        error = model.run(sess, x)
        if x != x:
            assert isinstance(error, tw.NanLossDuringTrainingError)
            assert "NaN loss during training." in str(error)
    model.close(sess)
    trace.append(f"w={weights(model.w)}")
    assert trace == expected["nan"]


def test_parity_restore(expected, checkpoint_dir):
    trace = []
    model = Model(trace)
    sess = session(model, [Counter(trace), tw.StopAtStepHook(last_step=6)], str(checkpoint_dir))
    trace.append(f"restored w={weights(model.w)}")
    while not sess.should_stop():
        assert model.run(sess, 1.0) is None
    model.close(sess)
    trace.append(f"w={weights(model.w)}")
    assert trace == expected["restore"]


def training_session_phase(model, trace, checkpoint_dir, last_step):
    sess = tw.MonitoredTrainingSession(
        is_chief=True, checkpoint_dir=str(checkpoint_dir), variables={"w": model.w}, save_checkpoint_steps=3,
        save_summaries_steps=0, log_step_count_steps=0, hooks=[Counter(trace), tw.StopAtStepHook(last_step=last_step)])
    while not sess.should_stop():
        assert model.run(sess, 1.0) is None
    model.close(sess)
    trace.append(f"w={weights(model.w)}")
    trace.append(f"latest={pathlib.Path(tw.latest_checkpoint(str(checkpoint_dir))).name}")


def test_parity_monitored_training_session(expected, tmp_path):
    trace = []
    training_session_phase(Model(trace), trace, tmp_path, last_step=4)
    assert trace == expected["mts"]
    resumed = []
    training_session_phase(Model(resumed), resumed, tmp_path, last_step=6)
    assert resumed == expected["mts_resume"]
