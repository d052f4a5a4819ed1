"""Subclassing a built-in hook works as in TF: overrides run in TF's order (H1, H6, H9, H12),
super().before_run returns the built-in's SessionRunArgs, run_values.results are what TF's would be,
super().after_run is the built-in behaviour and leaving it out skips it, TF's protected extension points
(_log_tensors, _log_and_record, _save) are honoured, and a subclass that overrides nothing stays native."""
import logging

import numpy as np
import pytest

import trainwatch as tw
from conftest import Recorder


def loss_at(nan_steps=(), value=0.5):
    """A step publishing loss (NaN at the given global steps)."""
    def step(ctx):
        return {"loss": np.float32("nan") if ctx.global_step in nan_steps else np.float32(value),
                "acc": np.float32(0.25)}
    return step


def run(hooks, steps, step=None, **kwargs):
    step = step or loss_at()
    with tw.MonitoredSession(hooks=hooks, **kwargs) as sess:
        for _ in range(steps):
            if sess.should_stop():
                break
            sess.run(step)
    return sess


def logged(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "trainwatch"]


def recording(base):
    """A subclass of ``base`` overriding all five callbacks, each recording and calling super()."""
    class Recording(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.log, self.args, self.results = [], [], []

        def begin(self):
            self.log.append("begin")
            super().begin()

        def after_create_session(self, session, coord):
            self.log.append("after_create_session")
            super().after_create_session(session, coord)

        def before_run(self, run_context):
            self.log.append("before_run")
            args = super().before_run(run_context)
            self.args.append(args)
            return args

        def after_run(self, run_context, run_values):
            self.log.append("after_run")
            self.results.append(run_values.results)
            super().after_run(run_context, run_values)

        def end(self, session):
            self.log.append("end")
            super().end(session)
    return Recording


ARGUMENTS = {  # the constructor arguments of each built-in hook, given an output directory
    "NanTensorHook": lambda d: ("loss",),
    "LoggingTensorHook": lambda d: (["loss"], 1),
    "CheckpointSaverHook": lambda d: (str(d), None, 2),
    "StopAtStepHook": lambda d: (None, 100),
    "StepCounterHook": lambda d: (1, None, str(d)),
    "SummarySaverHook": lambda d: (1, None, str(d), None, None, ["loss"]),
    "FeedFnHook": lambda d: (lambda: {"x": np.ones(1, np.float32)},),
    "FinalOpsHook": lambda d: (lambda ctx: {"final": np.float32(7)},),
    "GlobalStepWaiterHook": lambda d: (0,),
    "ProfilerHook": lambda d: (1, None, str(d)),
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_every_built_in_hook_can_be_subclassed_in_tf_order_H1_H6_H9_H12(name, tmp_path):
    hook = recording(getattr(tw, name))(*ARGUMENTS[name](tmp_path))
    run([hook], 3)
    assert hook.log == ["begin", "after_create_session"] + ["before_run", "after_run"] * 3 + ["end"]
    assert len(hook.results) == 3


def test_a_subclass_overriding_nothing_stays_native():
    class Plain(tw.NanTensorHook):
        pass
    hook = Plain("loss")
    with tw.MonitoredSession(hooks=[hook]) as sess:
        assert sess._handles == [hook._native]  # the library runs the built-in itself: no Python per run
        with pytest.raises(tw.NanLossDuringTrainingError):
            sess.run(loss_at(nan_steps=(0,)))


def test_overrides_interleave_with_other_hooks_in_list_order_H9():
    log = []

    class Mine(tw.StopAtStepHook):
        def before_run(self, run_context):
            log.append(("mine", "before_run"))
            return super().before_run(run_context)

        def after_run(self, run_context, run_values):
            log.append(("mine", "after_run"))
            super().after_run(run_context, run_values)
    first, last = Recorder("first", log), Recorder("last", log)
    run([first, Mine(last_step=1), last], 1)
    runs = [entry for entry in log if entry[1] in ("before_run", "after_run")]
    assert runs == [("first", "before_run"), ("mine", "before_run"), ("last", "before_run"),
                    ("first", "after_run"), ("mine", "after_run"), ("last", "after_run")]


class CustomNan(tw.NanTensorHook):
    """The seed's pattern: its own action, then (optionally) the built-in check."""

    def __init__(self, *args, call_super=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.call_super = call_super
        self.args, self.results, self.nan_steps, self.stop_seen = [], [], [], []

    def before_run(self, run_context):
        args = super().before_run(run_context)
        self.args.append(args)
        return args

    def after_run(self, run_context, run_values):
        self.results.append(run_values.results)
        if np.isnan(run_values.results):
            self.nan_steps.append(int(run_context.session.run("global_step")))
        if self.call_super:
            super().after_run(run_context, run_values)
        self.stop_seen.append(run_context.stop_requested)


def test_nan_subclass_gets_the_loss_fetch_and_the_loss_value_B31():
    hook = CustomNan("loss")
    run([hook], 2)
    assert hook.args == [tw.SessionRunArgs("loss")] * 2
    assert hook.results == [np.float32(0.5)] * 2 and type(hook.results[0]) is np.float32


def test_super_after_run_runs_the_nan_check_and_its_action_B33(caplog):
    caplog.set_level(logging.ERROR, logger="trainwatch")
    hook = CustomNan("loss")
    with pytest.raises(tw.NanLossDuringTrainingError):
        run([hook], 5, loss_at(nan_steps=(2,)))
    assert hook.nan_steps == [3]  # the custom action ran first (global step after the run)
    assert any("Model diverged with loss = NaN." in m for m in logged(caplog))


def test_leaving_out_super_after_run_skips_the_built_in_action():
    hook = CustomNan("loss", call_super=False)
    sess = run([hook], 5, loss_at(nan_steps=(2,)))
    assert hook.nan_steps == [3] and sess.global_step == 5  # training went on


def test_super_after_run_stop_request_shows_in_the_run_context_B34():
    hook = CustomNan("loss", fail_on_nan_loss=False)
    sess = run([hook], 5, loss_at(nan_steps=(1,)))
    assert hook.stop_seen == [False, True] and sess.global_step == 2


def test_the_built_in_methods_of_library_run_hooks_run_only_from_a_session_callback_H33():
    class Saves(tw.CheckpointSaverHook):
        def after_run(self, run_context, run_values):
            super().after_run(run_context, run_values)
    hook = Saves("ckpt", save_steps=1)
    with pytest.raises(RuntimeError, match="super\\(\\).after_run"):
        hook.after_run(None, tw.SessionRunValues(np.int64(1)))


def test_an_override_that_raises_fails_the_run_with_that_exception_H14():
    class Broken(tw.StopAtStepHook):
        def after_run(self, run_context, run_values):
            raise KeyError("mine")
    with pytest.raises(KeyError, match="mine"):
        run([Broken(last_step=3)], 1)


def test_logging_subclass_gets_its_tensors_and_super_logs_B8_B9(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")

    class Quiet(tw.LoggingTensorHook):
        results = []

        def before_run(self, run_context):
            args = super().before_run(run_context)
            assert args == tw.SessionRunArgs({"the loss": "loss"})
            return args

        def after_run(self, run_context, run_values):
            self.results.append(run_values.results)  # no super(): nothing is logged
    run([Quiet({"the loss": "loss"}, every_n_iter=1)], 2)
    assert Quiet.results == [{"the loss": np.float32(0.5)}] * 2
    assert not [m for m in logged(caplog) if m.startswith("the loss")]


def test_checkpoint_subclass_fetches_the_global_step_and_skipping_super_skips_saves_B21_B22(tmp_path):
    class NoPeriodicSaves(tw.CheckpointSaverHook):
        results = []

        def after_run(self, run_context, run_values):
            self.results.append(run_values.results)
    run([NoPeriodicSaves(str(tmp_path), save_steps=1)], 3)
    assert NoPeriodicSaves.results == [0, 1, 2] and type(NoPeriodicSaves.results[0]) is np.int64
    steps = sorted(int(p.name.split("-")[1]) for p in tmp_path.glob("model.ckpt-*"))
    assert steps == [0, 3]  # after_create_session's save and end's, none from after_run


def test_feed_fn_subclass_returns_what_super_fed_without_a_conflict_B44():
    fed = []

    class Feeds(tw.FeedFnHook):
        def before_run(self, run_context):
            args = super().before_run(run_context)
            fed.append(sorted(args.feed_dict))
            return args
    run([Feeds(lambda: {"x": np.ones(1, np.float32)})], 2, lambda ctx: fed.append(float(ctx.feeds["x"][0])))
    assert fed == [["x"], 1.0, ["x"], 1.0]


def test_log_tensors_extension_point(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")

    class Custom(tw.LoggingTensorHook):
        seen = []

        def _log_tensors(self, tensor_values):
            self.seen.append(tensor_values)
            super()._log_tensors({"doubled": tensor_values["loss"] * 2})
    run([Custom(["loss"], every_n_iter=1)], 2)
    assert Custom.seen == [{"loss": np.float32(0.5)}] * 2 and type(Custom.seen[0]["loss"]) is np.float32
    assert [m.split(" (")[0] for m in logged(caplog) if m.startswith("doubled")] == ["doubled = 1.0"] * 2


def test_log_and_record_extension_point_B28(tmp_path):
    class Rates(tw.StepCounterHook):
        seen = []

        def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
            self.seen.append((elapsed_steps, global_step))
    run([Rates(every_n_steps=2, output_dir=str(tmp_path))], 6)
    assert Rates.seen and all(steps == 2 for steps, _ in Rates.seen)
    assert [step for _, step in Rates.seen] == sorted({step for _, step in Rates.seen})
    rates = [e for p in tmp_path.glob("events.out.tfevents.*") for e in tw.summary_iterator(p)
             if "global_step/sec" in e.scalars]
    assert rates == []  # the override replaced logging and recording


def test_save_extension_point_stop_request_B22_B24(tmp_path):
    class StopAfterSecondSave(tw.CheckpointSaverHook):
        saves = []

        def _save(self, session, step):
            self.saves.append(int(step))
            super()._save(session, step)
            return len(self.saves) == 2
    sess = run([StopAfterSecondSave(str(tmp_path), save_steps=2)], 10)
    assert StopAfterSecondSave.saves[:2] == [0, 2] and sess.global_step == 2
    assert tw.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-2")


def test_final_ops_names_mirror_their_structure_B43():
    w = np.full(2, 4.0, np.float32)
    hook = tw.FinalOpsHook({"loss": "loss", "state": ["w", "global_step"]})
    assert hook.final_ops_values is None
    with tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables={"w": w})), hooks=[hook]) as sess:
        sess.run(loss_at(value=1.5))
        sess.run(loss_at(value=2.5))
    values = hook.final_ops_values
    assert values["loss"] == np.float32(2.5) and type(values["loss"]) is np.float32
    np.testing.assert_array_equal(values["state"][0], w)
    assert values["state"][1] == 2


def test_final_ops_of_variables_only_stay_native():
    w = np.full(2, 4.0, np.float32)
    hook = tw.FinalOpsHook("w")
    with tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables={"w": w})), hooks=[hook]) as sess:
        assert sess._handles == [hook._native]
        sess.run(loss_at())
    np.testing.assert_array_equal(hook.final_ops_values, w)


def test_final_ops_of_a_step_give_numpy_scalars_B43():
    hook = tw.FinalOpsHook(lambda ctx: {"final": np.float32(7)})
    run([hook], 1)
    assert hook.final_ops_values == {"final": 7.0} and type(hook.final_ops_values["final"]) is np.float32


def test_final_ops_of_anything_else_is_a_type_error():
    with pytest.raises(TypeError, match="final_ops must be a step function"):
        tw.FinalOpsHook(42)


def test_summary_subclass_gets_the_global_step_and_the_summary_on_saving_runs_B38(tmp_path):
    hook = recording(tw.SummarySaverHook)(save_steps=2, output_dir=str(tmp_path), summary_op=["loss"])
    run([hook], 3)
    assert [sorted(args.fetches) for args in hook.args] == [["global_step", "summary"], ["global_step"],
                                                            ["global_step", "summary"]]
    assert hook.results[0] == {"global_step": 0, "summary": [np.float32(0.5)]}


def test_only_the_overridden_callbacks_leave_native_code(monkeypatch):
    from trainwatch import _hook_adapter
    calls = []
    for name in ("begin", "before_run", "after_run"):
        original = getattr(_hook_adapter.WrapperAdapter, name)
        monkeypatch.setattr(_hook_adapter.WrapperAdapter, name,
                            lambda self, arg, _name=name, _original=original: (calls.append(_name), _original(self, arg)))

    class EndOnly(tw.StopAtStepHook):
        ended = False

        def end(self, session):
            EndOnly.ended = True
            super().end(session)
    sess = run([EndOnly(last_step=2)], 5)
    assert calls == [] and EndOnly.ended and sess.global_step == 2  # stopped natively at last_step (B14)


def test_an_aborted_error_from_an_override_recovers_the_whole_run_H19():
    created = []

    class Preempted(tw.StopAtStepHook):
        raised = False

        def after_create_session(self, session, coord):
            created.append(int(session.run("global_step")))
            super().after_create_session(session, coord)

        def after_run(self, run_context, run_values):
            if not Preempted.raised:
                Preempted.raised = True
                raise tw.AbortedError("preempted")
            super().after_run(run_context, run_values)
    sess = run([Preempted(last_step=3)], 10)
    assert created == [0, 0] and sess.global_step == 3  # re-created (nothing to restore: initialised again)
