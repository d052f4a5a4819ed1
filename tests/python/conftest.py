"""pytest suite of the `trainwatch` Python package. tools/test runs it against the package the build
assembled (PYTHONPATH=<build>/bindings/python). Test names cite tf-semantics IDs (H15, B33, …)."""
import numpy as np
import pytest

import trainwatch as tw


class Recorder(tw.SessionRunHook):
    """A hook that records every call (and optionally fetches) into a shared log."""

    def __init__(self, name="hook", log=None, fetches=None, feed_dict=None):
        self.name = name
        self.log = log if log is not None else []
        self.fetches = fetches
        self.feed_dict = feed_dict
        self.results = []
        self.run_contexts = []

    def begin(self):
        self.log.append((self.name, "begin"))

    def after_create_session(self, session, coord):
        self.log.append((self.name, "after_create_session"))

    def before_run(self, run_context):
        self.log.append((self.name, "before_run"))
        self.run_contexts.append(run_context)
        if self.fetches is None and self.feed_dict is None:
            return None
        return tw.SessionRunArgs(self.fetches, self.feed_dict)

    def after_run(self, run_context, run_values):
        self.log.append((self.name, "after_run"))
        self.results.append(run_values.results)

    def end(self, session):
        self.log.append((self.name, "end"))

    def on_error(self, session, error_code):
        self.log.append((self.name, "on_error", error_code))


def loss_step(value=0.5):
    loss = np.float32(value)

    def step(ctx):
        return {"loss": loss}
    return step


@pytest.fixture
def recorder_cls():
    return Recorder
