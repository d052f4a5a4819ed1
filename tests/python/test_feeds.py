"""Feeds: the caller's and hooks', what the step sees, and TF's conflict rules (H22–H25)."""
import numpy as np
import pytest
import torch

import trainwatch as tw
from conftest import Recorder


def test_step_sees_the_very_objects_fed():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.ones(4)
    seen = {}

    def step(ctx):
        seen.update(ctx.feeds)
    with tw.MonitoredSession() as sess:
        sess.run(step, feed_dict={"x": x, "t": t})
    assert seen["x"] is x and seen["t"] is t


def test_hook_feeds_reach_the_step_H23():
    seen = {}
    y = np.float32(7)
    with tw.MonitoredSession(hooks=[Recorder(feed_dict={"y": y})]) as sess:
        sess.run(lambda ctx: seen.update(ctx.feeds), feed_dict={"x": np.zeros(1)})
    assert seen["y"] is y and set(seen) == {"x", "y"}


def test_two_hooks_feeding_one_name_conflict_H22():
    later = Recorder("later")
    hooks = [Recorder("a", feed_dict={"x": np.float32(1)}), Recorder("b", feed_dict={"x": np.float32(2)}), later]
    with pytest.raises(RuntimeError, match=r"Same tensor is fed by two hooks. Conflict\(s\): \['x'\]"):
        with tw.MonitoredSession(hooks=hooks) as sess:
            sess.run(lambda ctx: None)
    assert ("later", "before_run") not in later.log


def test_hook_and_caller_feeding_one_name_conflict_H23():
    with pytest.raises(tw.FeedConflictError, match=r"Same tensor is fed by a SessionRunHook and user"):
        with tw.MonitoredSession(hooks=[Recorder(feed_dict={"x": np.float32(1)})]) as sess:
            sess.run(lambda ctx: None, feed_dict={"x": np.float32(2)})


def test_empty_feed_dict_is_ignored_H25():
    with tw.MonitoredSession(hooks=[Recorder(feed_dict={})]) as sess:
        assert sess.run(lambda ctx: dict(ctx.feeds), feed_dict={}) == {}


def test_python_numbers_are_fed_as_0d_values():
    seen = {}
    with tw.MonitoredSession(hooks=[Recorder(fetches=[])]) as sess:
        sess.run(lambda ctx: seen.update(ctx.feeds), feed_dict={"lr": 0.5, "n": 3, "flag": True})
    assert seen == {"lr": 0.5, "n": 3, "flag": True}


def test_feeds_are_listed_in_run_context_original_args_H4():
    hook = Recorder()
    x = np.ones(3)
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(lambda ctx: None, feed_dict={"x": x})
    assert hook.run_contexts[0].original_args.feed_dict["x"] is x
