"""TF1 hook code runs unchanged apart from ``tf.`` → ``tw.`` and the graph → step edit: the global-step
handle (H31), TF's private attributes of the built-in hooks with their effect (H33), a formatter's line
as written (B9), explicit requests told apart from "*" (W29), and built-in hooks driven by hand as TF's
hook tests drive them (H1–H5 objects built by the test)."""
import logging
import os

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import basic_session_run_hooks


def train_step(ctx):
    """The graph → step edit: loss falls with the global step; "extra" is published only on request."""
    outputs = {"loss": np.float32(1.0 / (1 + ctx.global_step))}
    if ctx.is_requested("extra"):
        outputs["extra"] = np.float32(7)
    return outputs


def train(hooks, steps, tmp_path=None, **kwargs):
    kwargs.setdefault("save_summaries_steps", None)
    kwargs.setdefault("log_step_count_steps", None)
    with tw.MonitoredTrainingSession(checkpoint_dir=None if tmp_path is None else str(tmp_path), hooks=hooks,
                                     **kwargs) as sess:
        for _ in range(steps):
            if sess.should_stop():
                break
            sess.run(train_step)
    return sess


def lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "trainwatch"]


# --- H31: the global-step functions ------------------------------------------------------------------

def test_the_global_step_functions_return_one_handle_named_global_step_H31():
    step = tw.train.get_global_step()
    assert step is tw.train.get_or_create_global_step() is tw.train.create_global_step(graph=None)
    assert tw.get_global_step is tw.train.get_global_step  # also at the package top level
    assert step.name == "global_step" and step.op.name == "global_step" and step.dtype == np.int64
    assert step == "global_step" and hash(step) == hash("global_step") and {step: 1}["global_step"] == 1
    assert tw.compat.v1.train.get_global_step() is step  # tf.compat.v1.train's path
    assert tw.estimator.LoggingTensorHook is tw.compat.v1.estimator.LoggingTensorHook is tw.train.LoggingTensorHook
    with tw.MonitoredSession() as sess:
        sess.raw_session().set_global_step(41)
        assert tw.train.global_step(sess, step) == 41 and sess.run(step) == 41


def test_the_handle_is_accepted_wherever_a_name_is_H31(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    seen = []

    class Reads(tw.train.SessionRunHook):
        def begin(self):
            self._global_step_tensor = tw.train.get_global_step()

        def before_run(self, run_context):
            return tw.train.SessionRunArgs([self._global_step_tensor, {"gs": self._global_step_tensor}])

        def after_run(self, run_context, run_values):
            seen.append((run_values.results, run_context.session.run(self._global_step_tensor)))

    logger = tw.train.LoggingTensorHook({"step": tw.train.get_global_step()}, every_n_iter=1)
    sess = train([Reads(), logger], 2)
    assert seen == [([0, {"gs": 0}], 1), ([1, {"gs": 1}], 2)]  # stale before the run, real after it (B14)
    assert type(seen[0][0][0]) is np.int64
    assert [m.split(" (")[0] for m in lines(caplog) if m.startswith("step")] == ["step = 0", "step = 1"]
    assert sess.global_step == 2


def test_an_early_stopping_hook_written_for_tf_stops_on_its_metric_H31():
    """The shape of the metric-based early-stopping hooks: the global step by handle and by .name."""

    class StopWhenBelow(tw.train.SessionRunHook):
        def __init__(self, monitor, threshold):
            self._monitor = monitor
            self._threshold = threshold
            self.stopped_at = None

        def begin(self):
            self._global_step_tensor = tw.train.get_global_step()
            if self._global_step_tensor is None:
                raise RuntimeError("Global step should be created to use StopWhenBelow.")

        def before_run(self, run_context):
            return tw.train.SessionRunArgs({self._monitor: self._monitor,
                                            self._global_step_tensor.name: self._global_step_tensor})

        def after_run(self, run_context, run_values):
            if run_values.results[self._monitor] < self._threshold:
                self.stopped_at = run_values.results[self._global_step_tensor.name]
                run_context.request_stop()

    hook = StopWhenBelow("loss", 0.2)
    sess = train([hook], 100)
    assert hook.stopped_at == 5 and sess.global_step == 6  # loss 1/6 < 0.2 in the run at step 5


# --- H33: TF's private attributes of the built-in hooks -----------------------------------------------

class LoggingMetricHook(tw.estimator.LoggingTensorHook):
    """The model zoo's metric-logging subclass, as written for TF: it adds the global step to
    _current_tensors in begin() and logs through its own logger on the runs TF's timer picks."""

    def __init__(self, tensors, metric_logger, every_n_iter=None, every_n_secs=None, at_end=False):
        super().__init__(tensors=tensors, every_n_iter=every_n_iter, every_n_secs=every_n_secs, at_end=at_end)
        self._logger = metric_logger

    def begin(self):
        super().begin()
        self._global_step_tensor = tw.train.get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use LoggingMetricHook.")
        if self._global_step_tensor.name not in self._current_tensors:
            self._current_tensors[self._global_step_tensor.name] = self._global_step_tensor

    def after_run(self, unused_run_context, run_values):
        if self._should_trigger:  # set by the built-in before_run from self._timer
            self._log_metric(run_values.results)
        self._iter_count += 1

    def _log_metric(self, tensor_values):
        self._timer.update_last_triggered_step(self._iter_count)
        global_step = tensor_values[self._global_step_tensor.name]
        for tag in self._tag_order:
            self._logger.append((tag, float(tensor_values[tag]), int(global_step)))


def test_a_subclass_adding_to_current_tensors_gets_them_fetched_and_logged_H33_B8():
    logged = []
    train([LoggingMetricHook({"loss": "loss"}, logged, every_n_iter=2)], 5)
    assert logged == [("loss", 1.0, 0), ("loss", pytest.approx(1 / 3), 2), ("loss", pytest.approx(0.2), 4)]


class CountsLogs:
    """A helper mixin listed after the built-in, as libraries write them: its code uses TF's state."""

    def _count_logs(self):
        self.logged_at = getattr(self, "logged_at", []) + ([self._iter_count] if self._should_trigger else [])


def test_a_subclass_using_tf_state_runs_tf_callbacks_one_overriding_nothing_stays_native_H33():
    class Plain(tw.train.LoggingTensorHook):
        pass

    class Counted(tw.train.LoggingTensorHook, CountsLogs):
        def after_run(self, run_context, run_values):
            self._count_logs()
            super().after_run(run_context, run_values)
    metric, plain = LoggingMetricHook(["loss"], [], every_n_iter=1), Plain(["loss"], every_n_iter=1)
    counted = Counted(["loss"], every_n_iter=2)
    with tw.MonitoredTrainingSession(hooks=[metric, plain, counted], save_summaries_steps=None,
                                     log_step_count_steps=None) as sess:
        assert plain._native in sess._handles  # no Python per run
        assert metric._native not in sess._handles and metric._tw_python and counted._tw_python
        for _ in range(3):
            sess.run(train_step)
    assert counted.logged_at == [0, 2]


def test_replacing_the_timer_changes_when_the_hook_triggers_H33_B2(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")

    class EveryThird(tw.train.LoggingTensorHook):
        def __init__(self, tensors):
            super().__init__(tensors, every_n_iter=1)
            self._timer = tw.train.SecondOrStepTimer(every_steps=3)

    outside = tw.train.LoggingTensorHook({"outside": "loss"}, every_n_iter=1)
    outside._timer = tw.train.SecondOrStepTimer(every_steps=2)  # written from outside the class
    train([EveryThird({"inside": "loss"}), outside], 7)
    assert [m.split(" (")[0] for m in lines(caplog) if m.startswith("inside")] == [
        "inside = 1.0", "inside = 0.25", "inside = 0.14285715"]  # runs 0, 3, 6
    assert len([m for m in lines(caplog) if m.startswith("outside")]) == 4  # runs 0, 2, 4, 6


def test_private_attributes_hold_tf_values_H33():
    timer_hooks = [tw.LoggingTensorHook(["loss"], every_n_iter=2), tw.StepCounterHook(every_n_steps=5),
                   tw.CheckpointSaverHook("ckpt", save_steps=3), tw.SummarySaverHook(2, output_dir="s", summary_op="loss"),
                   tw.ProfilerHook(save_steps=4, output_dir="p")]
    assert all(isinstance(h._timer, tw.train.SecondOrStepTimer) for h in timer_hooks)
    logging_hook = tw.LoggingTensorHook({"b": "loss", "a": "acc"}, at_end=True)
    assert (logging_hook._tensors, logging_hook._tag_order, logging_hook._log_at_end) == (
        {"b": "loss", "a": "acc"}, ["a", "b"], True)
    assert logging_hook._timer.should_trigger_for_step(0) is False  # TF's NeverTriggerTimer (B5)
    stop = tw.StopAtStepHook(num_steps=10)
    assert (stop._num_steps, stop._last_step) == (10, None)
    saver = tw.CheckpointSaverHook("ckpt", save_steps=3, checkpoint_basename="m.ckpt")
    assert (saver._checkpoint_dir, saver._save_path, saver._listeners, saver._steps_per_run) == (
        "ckpt", "ckpt/m.ckpt", [], 1)
    assert saver._global_step_tensor.name == "global_step"
    nan = tw.NanTensorHook("loss", fail_on_nan_loss=False)
    assert (nan._loss_tensor, nan._fail_on_nan_loss) == ("loss", False)
    counter = tw.StepCounterHook(every_n_steps=5, output_dir="out")
    assert (counter._output_dir, counter._summary_writer, counter._last_global_step, counter._steps_per_run,
            counter._summary_tag) == ("out", None, None, 1, "global_step/sec")
    assert tw.GlobalStepWaiterHook(7)._wait_until_step == 7
    assert tw.ProfilerHook(save_steps=1, output_dir="p")._output_file == "p/timeline-{}.json"
    final = tw.FinalOpsHook("global_step")
    assert (final._final_ops, final._final_ops_values) == ("global_step", None)


def test_a_stop_at_step_subclass_moving_last_step_stops_there_H33_B14():
    class Extended(tw.train.StopAtStepHook):
        def after_create_session(self, session, coord):
            super().after_create_session(session, coord)
            self._last_step += 2  # TF's attribute, set by the built-in from num_steps (B13)
    sess = train([Extended(num_steps=3)], 100)
    assert sess.global_step == 5


def test_feed_fn_is_tf_s_public_attribute_and_a_new_one_is_called_H33_B44():
    hook = tw.train.FeedFnHook(lambda: {"x": np.ones(1, np.float32)})
    hook.feed_fn = lambda: {"x": np.full(1, 2, np.float32)}
    seen = []
    with tw.MonitoredTrainingSession(hooks=[hook], save_summaries_steps=None, log_step_count_steps=None) as sess:
        sess.run(lambda ctx: seen.append(float(ctx.feeds["x"][0])))
    assert seen == [2.0]


# --- B9: a formatter's line ----------------------------------------------------------------------------

@pytest.mark.parametrize("python_state", [False, True])
def test_a_formatter_line_is_logged_exactly_B9(caplog, python_state):
    caplog.set_level(logging.INFO, logger="trainwatch")
    hook = tw.train.LoggingTensorHook(["loss"], every_n_iter=1, formatter=lambda v: f"loss={float(v['loss']):.2f}")
    if python_state:
        hook._timer = tw.train.SecondOrStepTimer(every_steps=1)
    train([hook], 3)
    assert [m for m in lines(caplog) if m.startswith("loss=")] == ["loss=1.00", "loss=0.50", "loss=0.33"]


# --- W29: explicit requests apart from "*" -------------------------------------------------------------

def test_is_requested_explicitly_leaves_out_the_request_for_every_value_W29(tmp_path):
    seen = []

    def step(ctx):
        seen.append((ctx.is_requested("extra"), ctx.is_requested("extra", explicitly=True),
                     "*" in ctx.requested, ctx.explicitly_requested))
        return {"loss": np.float32(1), "extra": np.float32(7)}

    summaries = tw.SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op="*")  # every value
    with tw.MonitoredSession(hooks=[summaries]) as sess:
        sess.run(step)
        sess.run(step)
    with tw.MonitoredSession(hooks=[summaries, tw.LoggingTensorHook(["extra"], every_n_iter=1)]) as sess:
        sess.run(step)
    assert seen == [(True, False, True, ()), (False, False, False, ()), (True, True, True, ("extra",))]


# --- driving a built-in hook by hand, as TF's hook tests do ----------------------------------------------

def test_a_logging_hook_driven_by_hand_logs_on_its_timer_H1_H4_B8(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    hook = tw.train.LoggingTensorHook({"the loss": "loss"}, every_n_iter=2)
    hook.begin()
    for step in range(3):
        run_context = tw.train.SessionRunContext(original_args=tw.train.SessionRunArgs(None), session=None)
        args = hook.before_run(run_context)
        assert args == (tw.train.SessionRunArgs({"the loss": "loss"}) if step != 1 else None)
        hook.after_run(run_context, tw.train.SessionRunValues(results={"the loss": np.float32(step)}))
    assert [m.split(" (")[0] for m in lines(caplog)] == ["the loss = 0.0", "the loss = 2.0"]


def test_stop_at_step_and_nan_hooks_driven_by_hand_H4_B13_B14_B33():
    with tw.MonitoredSession() as sess:
        raw = sess.raw_session()
        hook = tw.train.StopAtStepHook(num_steps=2)
        hook.begin()
        hook.after_create_session(raw, None)
        stops = []
        for step in range(2):
            run_context = tw.train.SessionRunContext(tw.train.SessionRunArgs(None), raw)
            assert hook.before_run(run_context) == tw.train.SessionRunArgs("global_step")
            raw.set_global_step(step + 1)  # what the run would have done
            hook.after_run(run_context, tw.train.SessionRunValues(results=step))
            stops.append(run_context.stop_requested)
        assert stops == [False, True]

    nan = tw.train.NanTensorHook("loss")
    run_context = tw.train.SessionRunContext(tw.train.SessionRunArgs(None), None)
    assert nan.before_run(run_context) == tw.train.SessionRunArgs("loss")
    nan.after_run(run_context, tw.train.SessionRunValues(np.float32(1)))
    with pytest.raises(tw.NanLossDuringTrainingError):
        nan.after_run(run_context, tw.train.SessionRunValues(np.float32("nan")))


def test_a_step_counter_driven_by_hand_logs_the_rate_B28_H33(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")

    class Session:  # the one call StepCounterHook makes: session.run(global_step)
        step = 0

        def run(self, fetches):
            assert fetches == "global_step"
            return self.step

    class HalfSecondTimer(tw.train.SecondOrStepTimer):  # a replaced _timer: every trigger 0.5 s apart
        def update_last_triggered_step(self, step):
            elapsed_secs, elapsed_steps = super().update_last_triggered_step(step)
            return (None if elapsed_secs is None else 0.5), elapsed_steps

    session = Session()
    hook = tw.train.StepCounterHook(every_n_steps=2)
    hook._timer = HalfSecondTimer(every_steps=2)
    hook.begin()
    run_context = tw.train.SessionRunContext(tw.train.SessionRunArgs(None), session)
    for step in range(5):
        assert hook.before_run(run_context) == tw.train.SessionRunArgs("global_step")
        session.step = step + 1
        hook.after_run(run_context, tw.train.SessionRunValues(step))
    assert [m for m in lines(caplog) if m.startswith("global_step/sec")] == ["global_step/sec: 4"] * 2  # steps 3, 5


def test_waiter_and_feed_hooks_driven_by_hand_B42_B44():
    class Session:  # another worker advances the global step between polls
        steps = iter([2, 3])

        def run(self, fetches):
            return next(self.steps)
    waiter = tw.train.GlobalStepWaiterHook(wait_until_step=3)
    waiter.begin()
    run_context = tw.train.SessionRunContext(tw.train.SessionRunArgs(None), Session())
    assert waiter.before_run(run_context) is None and waiter._worker_is_started
    assert waiter.before_run(run_context) is None  # started: no more polls (the iterator is spent)

    feeds = tw.train.FeedFnHook(lambda: {"x": 1})
    assert feeds.before_run(run_context) == tw.train.SessionRunArgs(fetches=None, feed_dict={"x": 1})


def test_a_waiter_subclass_reads_tf_state_in_a_session_H33_B42():
    class Started(tw.train.GlobalStepWaiterHook):
        seen = []

        def after_run(self, run_context, run_values):
            self.seen.append(self._worker_is_started)
    train([Started(wait_until_step=0)], 2)
    assert Started.seen == [True, True]


def test_hooks_the_library_runs_cannot_be_driven_by_hand_and_say_so():
    hook = tw.train.CheckpointSaverHook("ckpt", save_steps=1)
    with pytest.raises(RuntimeError, match="CheckpointSaverHook cannot be driven by hand"):
        hook.begin()


# --- H33: CheckpointSaverHook's _timer, _listeners and _steps_per_run -----------------------------------

def saved_steps(directory):
    return sorted(int(name.rpartition("-")[2]) for name in os.listdir(directory) if name.startswith("model.ckpt-"))


def train_saving(hooks, steps):
    w = np.zeros(4, np.float32)
    with tw.MonitoredTrainingSession(hooks=hooks, variables={"w": w}, save_summaries_steps=None,
                                     log_step_count_steps=None) as sess:
        for _ in range(steps):
            if sess.should_stop():
                break
            sess.run(lambda ctx: np.add(w, 1, out=w))
    return sess


def test_a_saver_subclass_replacing_the_timer_in_begin_saves_on_its_steps_H33_B22(tmp_path):
    class EveryThird(tw.train.CheckpointSaverHook):
        def begin(self):
            self._timer = tw.train.SecondOrStepTimer(every_steps=3)
            super().begin()
    hook = EveryThird(str(tmp_path), save_steps=1)
    sess = train_saving([hook], 7)
    assert hook._tw_python and hook._native not in sess._handles
    assert saved_steps(tmp_path) == [0, 3, 6, 7]  # creation, the timer's steps, end (the step moved)
    assert tw.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")


def test_a_timer_replaced_from_outside_takes_effect_H33_B5(tmp_path):
    hook = tw.train.CheckpointSaverHook(str(tmp_path), save_steps=1)
    hook._timer = basic_session_run_hooks.NeverTriggerTimer()  # TF: tensorflow.python.training.basic_session_run_hooks
    train_saving([hook], 4)
    assert saved_steps(tmp_path) == [0, 4]  # only at creation and at end


def test_a_listener_appended_in_begin_is_called_around_each_save_H33_B24(tmp_path):
    class Recording(tw.train.CheckpointSaverListener):
        def __init__(self):
            self.calls = []

        def begin(self):
            self.calls.append("begin")

        def before_save(self, session, global_step_value):
            self.calls.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            written = os.path.exists(tmp_path / f"model.ckpt-{global_step_value}")
            self.calls.append(("after", global_step_value, written))
            return global_step_value >= 4  # a listener's stop ends training after that run (B22)

        def end(self, session, global_step_value):
            self.calls.append(("end", global_step_value))

    listener = Recording()

    class WithListener(tw.train.CheckpointSaverHook):
        def begin(self):
            self._listeners.append(listener)
            super().begin()
    sess = train_saving([WithListener(str(tmp_path), save_steps=2)], 10)
    assert sess.global_step == 4
    assert listener.calls == ["begin", ("before", 0), ("after", 0, True), ("before", 2), ("after", 2, True),
                              ("before", 4), ("after", 4, True), ("end", 4)]
    assert saved_steps(tmp_path) == [0, 2, 4]


def test_a_saver_subclass_using_no_tf_state_stays_native_one_using_the_timer_does_not_H33(tmp_path):
    class Plain(tw.train.CheckpointSaverHook):
        pass

    class Timed(tw.train.CheckpointSaverHook):
        def after_create_session(self, session, coord):
            self.period = self._timer._every_steps
            super().after_create_session(session, coord)
    plain, timed = Plain(str(tmp_path / "plain"), save_steps=2), Timed(str(tmp_path / "timed"), save_steps=3)
    w = np.zeros(4, np.float32)
    with tw.MonitoredTrainingSession(hooks=[plain, timed], variables={"w": w}, save_summaries_steps=None,
                                     log_step_count_steps=None) as sess:
        assert plain._native in sess._handles and not plain._tw_python  # no Python per run
        assert timed._native not in sess._handles and timed._tw_python
        for _ in range(4):
            sess.run(lambda ctx: np.add(w, 1, out=w))
    assert (saved_steps(tmp_path / "plain"), saved_steps(tmp_path / "timed"), timed.period) == ([0, 2, 4], [0, 3, 4], 3)


def test_a_saver_subclass_whose_begin_skips_super_is_told_so_H33(tmp_path):
    class NoSuper(tw.train.CheckpointSaverHook):
        def begin(self):
            self._timer = tw.train.SecondOrStepTimer(every_steps=2)
    with pytest.raises(RuntimeError, match=r"must call super\(\).begin\(\)"):
        train_saving([NoSuper(str(tmp_path), save_steps=1)], 3)


def test_a_native_saver_subclass_whose_begin_skips_super_gets_an_error_not_a_crash_H33(tmp_path):
    class Quiet(tw.train.CheckpointSaverHook):  # names no TF attribute: the library's hook runs it
        def begin(self):
            pass
    with pytest.raises(tw.errors.FailedPreconditionError, match=r"must call the built-in begin\(\)"):
        train_saving([Quiet(str(tmp_path), save_steps=1)], 3)
