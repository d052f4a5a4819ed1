"""session.run(fetches) with names, as TF hook code calls it: inside hooks (run_context.session,
the session of after_create_session/end) and on the monitored session, a name or a nesting of names of
variables, published outputs of the run in progress, or "global_step" gives their values without running
a step or hooks; values are what tf.Session.run returns (numpy scalars for 0-d values)."""
import numpy as np
import pytest

import trainwatch as tw
from conftest import Recorder


def publish_step(ctx):
    return {"loss": np.float32(ctx.global_step) + np.float32(0.5), "grad": np.arange(3, dtype=np.float32)}


def session_with(hooks, w=None):
    variables = {"w": w if w is not None else np.full(2, 4.0, np.float32)}
    return tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables=variables)), hooks=hooks)


class Reader(tw.SessionRunHook):
    """Reads by name where TF hooks do: after_create_session, after_run (run_context.session), end."""

    def __init__(self, fetches):
        self.fetches = fetches
        self.created, self.after, self.ended = [], [], []

    def after_create_session(self, session, coord):
        self.created.append(session.run("global_step"))

    def after_run(self, run_context, run_values):
        self.after.append(run_context.session.run(self.fetches))

    def end(self, session):
        self.ended.append(session.run(["global_step", "w"]))


def test_the_global_step_idiom_in_after_create_session_after_run_and_end_B13_B14():
    hook = Reader("global_step")
    with session_with([hook]) as sess:
        for _ in range(2):
            sess.run(publish_step)
    assert hook.created == [0] and type(hook.created[0]) is np.int64
    assert hook.after == [1, 2]  # the current value, as session.run(global_step) in TF's after_run (B14)
    assert hook.ended[0][0] == 2
    np.testing.assert_array_equal(hook.ended[0][1], [4.0, 4.0])


def test_outputs_of_the_run_in_progress_and_nestings_H20():
    hook = Reader({"a": ["loss", ("w", "global_step")], "b": "grad"})
    with session_with([hook]) as sess:
        sess.run(publish_step)
    result = hook.after[0]
    assert type(result["a"][0]) is np.float32 and result["a"][0] == 0.5
    assert isinstance(result["a"][1], tuple) and result["a"][1][1] == 1
    np.testing.assert_array_equal(result["a"][1][0], [4.0, 4.0])
    np.testing.assert_array_equal(result["b"], [0, 1, 2])


def test_values_are_copies():
    w = np.full(2, 4.0, np.float32)
    with session_with([], w) as sess:
        value = sess.run("w")
        w[0] = 9.0
    assert value[0] == 4.0


def test_the_monitored_session_reads_without_a_step_or_hooks_H9():
    recorder = Recorder()
    with session_with([recorder]) as sess:
        sess.run(publish_step)
        calls = len(recorder.log)
        assert sess.run("global_step") == 1
        values = sess.run({"step": "global_step", "w": ["w"]})
        assert len(recorder.log) == calls  # no hook ran
        assert sess.global_step == 1        # no step ran
    assert values["step"] == 1
    np.testing.assert_array_equal(values["w"][0], [4.0, 4.0])


def test_a_name_that_matches_nothing_is_not_found_with_the_name():
    with session_with([]) as sess:
        with pytest.raises(tw.NotFoundError, match="'nope'"):
            sess.run("nope")
        with pytest.raises(tw.NotFoundError, match="'loss'"):
            sess.run(["w", "loss"])  # outputs exist only while a run is in progress


def test_outputs_of_another_run_are_not_found_inside_a_hook():
    class Missing(tw.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.session.run("accuracy")
    with pytest.raises(tw.NotFoundError, match="'accuracy'"):
        with session_with([Missing()]) as sess:
            sess.run(publish_step)


@pytest.mark.parametrize("fetches", [42, ["w", 3], {"a": object()}, None])
def test_what_is_neither_a_step_nor_fetches_is_a_type_error(fetches):
    with session_with([]) as sess:
        with pytest.raises(TypeError, match="run\\(\\) accepts a step function .* or fetches"):
            sess.run(fetches)
        with pytest.raises(TypeError, match="run\\(\\) accepts"):
            sess.raw_session().run(fetches)


def test_feeds_with_names_are_refused():
    with session_with([]) as sess:
        with pytest.raises(ValueError, match="feed_dict"):
            sess.run("w", feed_dict={"x": np.zeros(1)})


def test_a_step_function_still_runs_a_step_without_hooks_W21():
    recorder = Recorder()

    class Evaluate(tw.SessionRunHook):
        def after_run(self, run_context, run_values):
            self.result = run_context.session.run(lambda ctx: {"eval": np.float32(1)})
    evaluate = Evaluate()
    with session_with([evaluate, recorder]) as sess:
        sess.run(publish_step)
    assert evaluate.result == {"eval": np.float32(1)}
    assert recorder.log.count(("hook", "before_run")) == 1


def test_patterns_read_variables():
    with session_with([]) as sess:
        values = sess.run("w*")
    assert list(values) == ["w"]


def test_reading_is_not_a_run_so_it_works_after_a_stop_H29():
    with session_with([tw.StopAtStepHook(last_step=1)]) as sess:
        sess.run(publish_step)
        assert sess.should_stop()
        assert sess.run("global_step") == 1
        with pytest.raises(RuntimeError, match="should_stop"):
            sess.run(publish_step)
