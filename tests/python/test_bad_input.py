"""Bad input comes back as Python exceptions, never as a crash."""
import numpy as np
import pytest
import torch

import trainwatch as tw
from conftest import Recorder


def scaffold_session(variables):
    return tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables=variables)))


@pytest.mark.parametrize("value", [np.array(["a", "b"]), np.zeros(2, np.complex64), np.array([1, None], object),
                                   np.zeros(2, ">f4")])
def test_arrays_of_unknown_dtypes_are_type_errors(value):
    with pytest.raises(TypeError, match="element type"):
        tw.scan(value)


@pytest.mark.parametrize("value", ["text", None, [1.0, 2.0], object()])
def test_non_arrays_are_type_errors(value):
    with pytest.raises(TypeError):
        tw.scan(value)


def test_a_non_contiguous_variable_is_rejected():
    with pytest.raises(tw.InvalidArgumentError, match="contiguous"):
        scaffold_session({"w": np.zeros((4, 4), np.float32)[:, ::2]})


def test_a_read_only_variable_is_rejected():
    w = np.zeros(3, np.float32)
    w.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        scaffold_session({"w": w})


def test_a_python_number_cannot_be_a_variable():
    with pytest.raises(TypeError):
        scaffold_session({"w": 1.0})


def test_variables_must_be_a_dict():
    with pytest.raises(TypeError, match="dict"):
        tw.Scaffold(variables=[np.zeros(1)])


def test_any_object_with_dlpack_is_accepted():
    class Exporter:
        def __dlpack__(self):
            return torch.zeros(2).__dlpack__()
    assert tw.scan(Exporter()).nan_count == 0  # a CPU export is fine


def test_garbage_from_before_run_is_a_type_error():
    class Garbage(tw.SessionRunHook):
        def before_run(self, run_context):
            return {"fetches": "loss"}
    with pytest.raises(TypeError, match="before_run must return SessionRunArgs or None"):
        with tw.MonitoredSession(hooks=[Garbage()]) as sess:
            sess.run(lambda ctx: None)


def test_a_hook_that_is_not_a_hook_is_a_type_error():
    with pytest.raises(TypeError, match="SessionRunHook"):
        tw.MonitoredSession(hooks=[42])


@pytest.mark.parametrize("outputs, error", [({1: np.zeros(1)}, TypeError), ({"x": "text"}, TypeError),
                                             ({"global_step": np.zeros(1)}, tw.InvalidArgumentError),
                                             ({"": np.zeros(1)}, tw.InvalidArgumentError)])
def test_bad_outputs_fail_the_run(outputs, error):
    with pytest.raises(error):
        with tw.MonitoredSession() as sess:
            sess.run(lambda ctx: outputs)


def test_bad_feed_names_and_values():
    with tw.MonitoredSession() as sess:
        with pytest.raises(TypeError):
            sess.run(lambda ctx: None, feed_dict={3: np.zeros(1)})
    with tw.MonitoredSession() as sess:
        with pytest.raises(TypeError):
            sess.run(lambda ctx: None, feed_dict={"x": object()})
        with pytest.raises(TypeError):
            sess.run(lambda ctx: None, feed_dict=[1, 2])


def test_a_step_that_is_not_callable_fails_the_run():
    with pytest.raises(TypeError):
        with tw.MonitoredSession() as sess:
            sess.run(42)


def test_a_step_context_kept_after_its_step_raises():
    kept = []
    with tw.MonitoredSession() as sess:
        sess.run(lambda ctx: kept.append(ctx))
    with pytest.raises(RuntimeError, match="only valid while its step function runs"):
        kept[0].global_step


def test_a_raw_session_kept_after_the_session_raises():
    class Keep(tw.SessionRunHook):
        def after_create_session(self, session, coord):
            self.session = session
    hook = Keep()
    with pytest.raises(ValueError):
        with tw.MonitoredSession(hooks=[hook]):
            raise ValueError("abandon")
    with pytest.raises(RuntimeError, match="closed"):
        hook.session.global_step


@pytest.mark.parametrize("kwargs, message", [({}, "One of num_steps or last_step must be specified."),
                                             ({"num_steps": 1, "last_step": 2}, "Only one of"),
                                             ({"num_steps": -1}, "")])
def test_stop_at_step_hook_arguments_B11(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tw.StopAtStepHook(**kwargs)


def test_checkpoint_saver_hook_arguments_B1_B18(tmp_path):
    with pytest.raises(ValueError, match="Either every_secs or every_steps should be provided."):
        tw.CheckpointSaverHook(str(tmp_path))
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps."):
        tw.CheckpointSaverHook(str(tmp_path), save_secs=1, save_steps=1)
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold."):
        tw.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=object(), scaffold=object())


def test_nan_tensor_hook_arguments():
    with pytest.raises(ValueError, match="action"):
        tw.NanTensorHook("loss", action="explode")
    with pytest.raises(ValueError, match="on_nan"):
        tw.NanTensorHook("loss", action="callback")
    with pytest.raises(tw.InvalidArgumentError):
        tw.NanTensorHook("loss", every_n_steps=0)


def test_hook_exceptions_with_unprintable_messages_still_surface():
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no str")

    def step(ctx):
        raise Unprintable()
    with pytest.raises(Unprintable):
        with tw.MonitoredSession() as sess:
            sess.run(step)


def test_a_recorder_with_a_bad_feed_value_fails_cleanly():
    with pytest.raises(TypeError):
        with tw.MonitoredSession(hooks=[Recorder(feed_dict={"x": "text"})]) as sess:
            sess.run(lambda ctx: None)


@pytest.mark.parametrize("returned", ["loss", b"loss", ["loss"], [np.zeros(1)], ("loss", np.zeros(1))],
                         ids=["str", "bytes", "list-of-names", "list-of-arrays", "tuple"])
def test_a_step_returning_tf_style_fetches_is_a_type_error(returned):
    """A str/list/tuple return looks like TF fetches and would be silently ignored; it fails
    the run with a TypeError naming what a step returns. None publishes nothing, as before (W22)."""
    with pytest.raises(TypeError, match=r"dict of outputs to publish .* or None, not " + type(returned).__name__):
        with tw.MonitoredSession() as sess:
            sess.run(lambda ctx: returned)
    with tw.MonitoredSession() as sess:
        assert sess.run(lambda ctx: None) is None
        with pytest.raises(TypeError, match="not list"):
            sess.run_without_hooks(lambda ctx: [1])


def test_stop_at_step_hook_with_sys_maxsize_does_not_stop_early():
    """B13: num_steps=sys.maxsize used to wrap last_step into the past and stop after one run; the
    target now saturates at INT64_MAX (B13)."""
    import sys
    with tw.MonitoredSession(hooks=[tw.StopAtStepHook(num_steps=sys.maxsize)]) as sess:
        for _ in range(3):
            sess.run(lambda ctx: None)
        assert not sess.should_stop()
        assert sess.global_step == 3
    with tw.MonitoredSession(hooks=[tw.StopAtStepHook(num_steps=sys.maxsize)]) as sess:
        sess.run(lambda ctx: ctx.set_global_step(sys.maxsize - 1))
        sess.run(lambda ctx: None)  # saturates at INT64_MAX and reaches the target
        assert sess.global_step == sys.maxsize and sess.should_stop()
