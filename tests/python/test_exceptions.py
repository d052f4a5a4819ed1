"""Exceptions both ways: Python exceptions come out of the library unchanged; failing statuses become
TF's error classes; error classes raised in Python steer the library (recovery, clean end)."""
import traceback

import numpy as np
import pytest

import trainwatch as tw
from conftest import Recorder, loss_step


class Boom(Exception):
    pass


def raising(error):
    def step(ctx):
        raise error
    return step


def test_step_exception_is_the_same_object_with_its_traceback():
    error = Boom("step failed")

    def failing_step(ctx):
        raise error
    with pytest.raises(Boom) as caught:
        with tw.MonitoredSession() as sess:
            sess.run(failing_step)
    assert caught.value is error
    assert "failing_step" in "".join(traceback.format_tb(caught.value.__traceback__))


class RaisingHook(tw.SessionRunHook):
    def __init__(self, where, error):
        self.where, self.error = where, error

    def begin(self):
        if self.where == "begin":
            raise self.error

    def after_create_session(self, session, coord):
        if self.where == "after_create_session":
            raise self.error

    def before_run(self, run_context):
        if self.where == "before_run":
            raise self.error

    def after_run(self, run_context, run_values):
        if self.where == "after_run":
            raise self.error

    def end(self, session):
        if self.where == "end":
            raise self.error


@pytest.mark.parametrize("where", ["begin", "after_create_session", "before_run", "after_run", "end"])
def test_hook_exception_is_the_same_object_H14_H18(where):
    error = Boom(where)
    with pytest.raises(Boom) as caught:
        sess = tw.MonitoredSession(hooks=[RaisingHook(where, error)])
        sess.run(loss_step())
        sess.close()
    assert caught.value is error


def test_failed_end_still_closes_the_session_H18():
    sess = tw.MonitoredSession(hooks=[RaisingHook("end", Boom("end"))])
    with pytest.raises(Boom):
        sess.close()
    with pytest.raises(RuntimeError, match="already closed"):
        sess.close()


def test_aborted_error_from_the_step_triggers_recovery_W25():
    attempts = []

    def step(ctx):
        attempts.append(1)
        if len(attempts) == 1:
            raise tw.AbortedError("preempted")
        return {"loss": np.float32(1)}
    with tw.MonitoredSession() as sess:
        assert sess.run(step) == {"loss": np.float32(1)}
    assert len(attempts) == 2


def test_singular_session_does_not_recover_W26():
    with pytest.raises(tw.UnavailableError):
        with tw.SingularMonitoredSession() as sess:
            sess.run(raising(tw.UnavailableError("gone")))


def test_unavailable_is_recoverable_W7():
    attempts = []

    def step(ctx):
        attempts.append(1)
        if len(attempts) == 1:
            raise tw.UnavailableError("gone")
    with tw.MonitoredSession() as sess:
        sess.run(step)
    assert len(attempts) == 2


def test_data_loss_is_not_recoverable_W7():
    with pytest.raises(tw.DataLossError):
        with tw.MonitoredSession() as sess:
            sess.run(raising(tw.DataLossError("corrupt")))


def test_library_status_becomes_the_tf_class():
    with pytest.raises(tw.NotFoundError, match="nope"):
        with tw.MonitoredSession(hooks=[Recorder(fetches="nope")]) as sess:
            sess.run(loss_step())


def test_nan_tensor_hook_raises_nan_loss_error_B33():
    with pytest.raises(tw.NanLossDuringTrainingError, match="NaN loss during training"):
        with tw.MonitoredSession(hooks=[tw.NanTensorHook("loss")]) as sess:
            sess.run(loss_step(float("nan")))


def test_nan_tensor_hook_without_failing_requests_stop_B34():
    with tw.MonitoredSession(hooks=[tw.NanTensorHook("loss", fail_on_nan_loss=False)]) as sess:
        sess.run(loss_step(float("nan")))
        assert sess.should_stop()


def test_on_error_exceptions_are_logged_not_raised(caplog):
    class BadOnError(tw.SessionRunHook):
        def on_error(self, session, error_code):
            raise Boom("in on_error")
    with pytest.raises(ZeroDivisionError):
        with tw.MonitoredSession(hooks=[BadOnError()]) as sess:
            sess.run(lambda ctx: 1 / 0)
    assert any("on_error raised" in r.getMessage() for r in caplog.records)


def test_on_error_receives_the_status_code():
    hook = Recorder()
    with pytest.raises(tw.NanLossDuringTrainingError):
        with tw.MonitoredSession(hooks=[tw.NanTensorHook("loss"), hook]) as sess:
            sess.run(loss_step(float("nan")))
    assert ("hook", "on_error", tw.NanLossDuringTrainingError.error_code) in hook.log


def test_runs_after_a_failure_are_refused():
    sess = tw.MonitoredSession()
    with pytest.raises(ZeroDivisionError):
        sess.run(lambda ctx: 1 / 0)
    with pytest.raises(tw.FailedPreconditionError):
        sess.run(loss_step())
    sess.close()
