"""Hook lifecycle with Python hooks (H1, H5–H14, W10) in the order TF calls them."""
import numpy as np
import pytest

import trainwatch as tw
from conftest import Recorder, loss_step


def test_session_run_hook_methods_are_no_ops_H1():
    hook = tw.SessionRunHook()
    assert hook.begin() is None and hook.before_run(None) is None
    assert hook.after_run(None, None) is None and hook.end(None) is None
    assert hook.after_create_session(None, None) is None


def test_construction_then_runs_then_end_in_list_order_H6_H9_H12():
    log = []
    hooks = [Recorder("a", log), Recorder("b", log)]
    with tw.MonitoredSession(hooks=hooks) as sess:
        assert log == [("a", "begin"), ("b", "begin"), ("a", "after_create_session"), ("b", "after_create_session")]
        del log[:]
        sess.run(loss_step())
        assert log == [("a", "before_run"), ("b", "before_run"), ("a", "after_run"), ("b", "after_run")]
        del log[:]
    assert log == [("a", "end"), ("b", "end")]


def test_one_run_context_shared_by_every_hook_per_run_H5():
    a, b = Recorder("a"), Recorder("b")
    with tw.MonitoredSession(hooks=[a, b]) as sess:
        sess.run(loss_step())
        sess.run(loss_step())
    assert a.run_contexts[0] is b.run_contexts[0]
    assert a.run_contexts[1] is b.run_contexts[1]
    assert a.run_contexts[0] is not a.run_contexts[1]


def test_original_args_hold_the_callers_step_and_feeds_H4():
    hook = Recorder()
    feeds = {"x": np.ones(2, np.float32)}
    step = loss_step()
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(step, feed_dict=feeds)
    args = hook.run_contexts[0].original_args
    assert args.fetches is step and args.feed_dict is feeds and args.options is None
    assert isinstance(hook.run_contexts[0].session, tw.RawSession)


def test_no_args_or_no_fetches_give_results_none_H10():
    none_hook = Recorder("none")
    no_fetch = Recorder("no_fetch", feed_dict={"x": np.float32(1)})
    with tw.MonitoredSession(hooks=[none_hook, no_fetch]) as sess:
        sess.run(loss_step())
    assert none_hook.results == [None] and no_fetch.results == [None]


class StopInBeforeRun(tw.SessionRunHook):
    def before_run(self, run_context):
        run_context.request_stop()


def test_request_stop_in_before_run_does_not_cancel_the_run_H11_H28():
    log = []
    ran = []
    with tw.MonitoredSession(hooks=[StopInBeforeRun(), Recorder("r", log)]) as sess:
        assert not sess.should_stop()
        sess.run(lambda ctx: ran.append(1))
        assert ran == [1] and ("r", "after_run") in log
        assert sess.should_stop()


def test_run_after_stop_is_an_error_H29():
    with tw.MonitoredSession(hooks=[StopInBeforeRun()]) as sess:
        sess.run(loss_step())
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested."):
            sess.run(loss_step())


def test_a_failing_step_skips_after_run_and_end_H13_H15():
    log = []
    with pytest.raises(ZeroDivisionError):
        with tw.MonitoredSession(hooks=[Recorder("r", log)]) as sess:
            sess.run(lambda ctx: 1 / 0)
    assert ("r", "after_run") not in log and ("r", "end") not in log
    assert [entry[:2] for entry in log if entry[1] == "on_error"] == [("r", "on_error")]


class Raises(tw.SessionRunHook):
    def after_run(self, run_context, run_values):
        raise KeyError("from after_run")


def test_after_run_raising_skips_later_hooks_H14():
    log = []
    with pytest.raises(KeyError, match="from after_run"):
        with tw.MonitoredSession(hooks=[Raises(), Recorder("later", log)]) as sess:
            sess.run(loss_step())
    assert ("later", "before_run") in log and ("later", "after_run") not in log


class Preempted(tw.SessionRunHook):
    """Raises AbortedError in the first after_run only."""

    def __init__(self):
        self.raised = False

    def after_run(self, run_context, run_values):
        if not self.raised:
            self.raised = True
            raise tw.AbortedError("preempted")


def test_recovery_reruns_after_create_session_not_begin_H8_H19_W10():
    log = []
    steps = []
    with tw.MonitoredSession(hooks=[Preempted(), Recorder("r", log)]) as sess:
        sess.run(lambda ctx: steps.append(ctx.global_step))
    assert log.count(("r", "begin")) == 1
    assert log.count(("r", "after_create_session")) == 2
    assert len(steps) == 2  # the whole run was retried (H19)


def test_global_step_fetch_is_the_value_at_the_start_of_the_run():
    hook = Recorder(fetches="global_step")
    with tw.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(3):
            sess.run(loss_step())
        assert sess.global_step == 3
    assert [int(r) for r in hook.results] == [0, 1, 2]


def test_step_context_sees_requested_names_and_global_step():
    seen = []

    def step(ctx):
        seen.append((ctx.requested, ctx.is_requested("loss"), ctx.is_requested("other"), ctx.global_step))
        return {"loss": np.float32(1)}
    with tw.MonitoredSession(hooks=[Recorder(fetches=["loss"])]) as sess:
        sess.run(step)
    assert seen == [(("loss",), True, False, 0)]


def test_step_context_session_runs_without_hooks_W21():
    log = []
    inner = []

    def step(ctx):
        ctx.session.run(lambda inner_ctx: inner.append(inner_ctx.global_step))
        return None
    with tw.MonitoredSession(hooks=[Recorder("r", log)]) as sess:
        sess.run(step)
    assert inner == [0]
    assert log.count(("r", "before_run")) == 1


def test_run_returns_the_step_return_value_W22():
    with tw.MonitoredSession() as sess:
        value = object()  # not a dict of outputs: returned, not published
        assert sess.run(lambda ctx: value) is value
        assert sess.run_step_fn(lambda ctx: None) is None


def test_set_global_step_from_the_step():
    with tw.MonitoredSession() as sess:
        sess.run(lambda ctx: ctx.set_global_step(41))
        assert sess.global_step == 41


def test_hooks_hear_after_create_session_with_a_raw_session_and_coord():
    class Stopper(tw.SessionRunHook):
        def after_create_session(self, session, coord):
            self.session = session
            coord.request_stop()
    hook = Stopper()
    with tw.MonitoredSession(hooks=[hook]) as sess:
        assert sess.should_stop()
        assert hook.session.global_step == 0 and hook.session.is_chief
