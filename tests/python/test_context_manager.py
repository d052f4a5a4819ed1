"""TF's exit rules for `with` (H15–H17, W17–W19, W23)."""
import pytest

import trainwatch as tw
from conftest import Recorder, loss_step


@pytest.mark.parametrize("error", [tw.OutOfRangeError("end of data"), StopIteration("done")])
def test_out_of_range_and_stop_iteration_are_swallowed_and_end_runs_H15(error):
    log = []

    def step(ctx):
        raise error
    with tw.MonitoredSession(hooks=[Recorder("r", log)]) as sess:
        sess.run(step)
        pytest.fail("the with body goes on after the end of the input")
    assert ("r", "end") in log and ("r", "after_run") not in log


def test_other_exceptions_skip_end_and_propagate_H15():
    log = []
    with pytest.raises(ValueError):
        with tw.MonitoredSession(hooks=[Recorder("r", log)]) as sess:
            sess.run(loss_step())
            raise ValueError("user code outside run")
    assert ("r", "end") not in log
    assert sess.should_stop()


def test_subclass_of_out_of_range_is_not_swallowed_H16():
    class MyOutOfRange(tw.OutOfRangeError):
        pass
    log = []
    with pytest.raises(MyOutOfRange):
        with tw.MonitoredSession(hooks=[Recorder("r", log)]):
            raise MyOutOfRange("subclass")
    assert ("r", "end") not in log


def test_enter_returns_the_session_W19():
    sess = tw.MonitoredSession()
    with sess as entered:
        assert entered is sess


def test_explicit_close_runs_end_H17():
    log = []
    sess = tw.MonitoredSession(hooks=[Recorder("r", log)])
    sess.run(loss_step())
    sess.close()
    assert log[-1] == ("r", "end")
    assert sess.should_stop()  # W4


def test_double_close_raises_already_closed_W18():
    sess = tw.MonitoredSession()
    sess.close()
    with pytest.raises(RuntimeError, match="Session is already closed."):
        sess.close()


def test_run_after_close_is_a_clear_error_W6():
    sess = tw.MonitoredSession()
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(loss_step())


def test_request_stop_in_step_without_with_raises_and_sets_no_flag_W23():
    sess = tw.MonitoredSession()

    def step(ctx):
        ctx.request_stop()
    with pytest.raises(StopIteration, match="step_fn has requested the iterations to stop."):
        sess.run(step)
    assert not sess.should_stop()
    sess.close()


def test_request_stop_in_step_inside_with_ends_cleanly_W23():
    log = []
    with tw.MonitoredSession(hooks=[Recorder("r", log)]) as sess:
        sess.run(lambda ctx: ctx.request_stop())
    assert log[-1] == ("r", "end")
