"""TF's private attributes of SummarySaverHook, ProfilerHook and FinalOpsHook take effect when written
(H33): TF1 hook code, unchanged apart from ``tf.`` → ``tw.`` and the graph → step edit, in a real
MonitoredTrainingSession, and the hooks driven by hand as TF's hook tests drive them. A subclass that
names none of the attributes stays native (no Python per run)."""
import glob
import json
import logging
import os

import numpy as np
import pytest

import trainwatch as tw


def train_step(ctx):
    """The graph → step edit: the loss falls with the global step; "w" is a six-element weight."""
    return {"loss": np.float32(1.0 / (1 + ctx.global_step)), "acc": np.float32(ctx.global_step),
            "w": np.arange(6, dtype=np.float32)}


def train(hooks, steps, **kwargs):
    kwargs.setdefault("save_summaries_steps", None)
    kwargs.setdefault("log_step_count_steps", None)
    with tw.MonitoredTrainingSession(hooks=hooks, **kwargs) as sess:
        for _ in range(steps):
            sess.run(train_step)
    return sess


class FakeSummaryWriter:
    """The fake writer of TF's hook tests: summaries and session logs by step."""

    def __init__(self):
        self.summaries = {}
        self.session_logs = []
        self.flushes = 0

    def add_summary(self, summary, global_step):
        self.summaries.setdefault(global_step, []).append(summary)

    def add_session_log(self, session_log, global_step):
        self.session_logs.append((session_log.status, global_step))

    def flush(self):
        self.flushes += 1

    def scalars(self):
        """step → [(tag, simple_value)] of the Summary messages written."""
        return {step: [(v.tag, pytest.approx(v.simple_value)) for s in written if isinstance(s, tw.Summary)
                       for v in s.value]
                for step, written in self.summaries.items()}


def event_scalars(directory):
    """step → [(tag, simple_value)] of the summaries in the directory's event files, and the steps of
    the histograms."""
    scalars, histograms = {}, {}
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        for event in tw.summary.summary_iterator(path):
            if event.HasField("summary"):
                for value in event.summary.value:
                    if value.HasField("histo"):
                        histograms.setdefault(value.tag, []).append((event.step, value.histo.num))
                    else:
                        scalars.setdefault(event.step, []).append((value.tag, pytest.approx(value.simple_value)))
    return scalars, histograms


# --- SummarySaverHook ------------------------------------------------------------------------------------

def test_a_summary_subclass_replacing_the_timer_in_begin_saves_on_its_steps_H33_B38(tmp_path):
    class EveryThird(tw.train.SummarySaverHook):
        def begin(self):
            super().begin()
            self._timer = tw.train.SecondOrStepTimer(every_steps=3)
    hook = EveryThird(save_steps=1, output_dir=str(tmp_path), summary_op="loss")
    train([hook], 7)
    assert hook._tw_python
    scalars, _ = event_scalars(str(tmp_path))
    assert scalars == {1: [("loss", 1.0)], 4: [("loss", 0.25)], 7: [("loss", 1 / 7)]}  # B38: first run, then timer


def test_a_fake_writer_gets_the_session_log_and_the_summaries_as_in_tf_hook_tests_H33_B39_B49():
    writer = FakeSummaryWriter()
    hook = tw.train.SummarySaverHook(save_steps=2, summary_writer=writer, summary_op=["loss", "w"])
    train([hook], 5)
    assert writer.session_logs == [(tw.SessionLog.START, 1)]  # B39: START on the first run
    assert writer.scalars() == {1: [("loss", 1.0)], 3: [("loss", 1 / 3)], 5: [("loss", 0.2)]}
    histograms = [s for written in writer.summaries.values() for s in written if not isinstance(s, tw.Summary)]
    assert len(histograms) == 3 and all(list(h) == ["w"] and h["w"].shape == (6,) for h in histograms)  # B49
    assert writer.flushes == 1  # B40


def test_a_summary_subclass_changing_summary_op_and_writer_writes_them_H33_B36(tmp_path):
    class MoreMetrics(tw.train.SummarySaverHook):
        def __init__(self, writer, **kwargs):
            super().__init__(**kwargs)
            self._summary_writer = writer

        def begin(self):
            self._summary_op = self._summary_op + ["acc"]
            super().begin()
    writer = FakeSummaryWriter()
    train([MoreMetrics(writer, save_steps=2, output_dir=str(tmp_path), summary_op=["loss"])], 3)
    assert writer.scalars() == {1: [("loss", 1.0), ("acc", 0.0)], 3: [("loss", 1 / 3), ("acc", 2.0)]}
    assert not glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))  # all went to the writer


def test_a_summary_subclass_moving_output_dir_writes_there_H33_B37(tmp_path):
    class Elsewhere(tw.train.SummarySaverHook):
        def __init__(self, output_dir, **kwargs):
            super().__init__(output_dir=str(tmp_path / "given"), **kwargs)
            self._output_dir = output_dir  # begin opens the shared writer of this directory
    train([Elsewhere(str(tmp_path / "moved"), save_steps=2, summary_op="loss")], 2)
    assert event_scalars(str(tmp_path / "moved"))[0] == {1: [("loss", 1.0)]}
    assert not (tmp_path / "given").exists()


def test_histograms_asked_for_are_written_by_tf_s_code_too_H33_B49(tmp_path):
    hook = tw.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op="*", histograms="w")
    hook._timer = tw.train.SecondOrStepTimer(every_steps=4)  # replaced from outside, before the session
    train([hook], 5)
    scalars, histograms = event_scalars(str(tmp_path))
    assert sorted(scalars) == [1, 5] and ("loss", 1.0) in scalars[1] and ("acc", 4.0) in scalars[5]
    assert all(tag != "global_step" for values in scalars.values() for tag, _ in values)
    assert histograms == {"w": [(1, 6.0), (5, 6.0)]}


def test_a_summary_hook_driven_by_hand_writes_to_its_writer_H4_B38_B39():
    class Session:  # the one call SummarySaverHook makes: session.run(global_step)
        step = 0

        def run(self, fetches):
            assert fetches == "global_step"
            return self.step

    writer, session = FakeSummaryWriter(), Session()
    hook = tw.train.SummarySaverHook(save_steps=2, summary_writer=writer, summary_op="loss")
    hook.begin()
    hook.after_create_session(session, None)
    run_context = tw.train.SessionRunContext(tw.train.SessionRunArgs(None), session)
    requested = []
    for step in range(4):
        args = hook.before_run(run_context)
        requested.append("summary" in args.fetches)
        session.step = step + 1
        results = {"global_step": step}
        if "summary" in args.fetches:
            results["summary"] = [np.float32(10 * step)]
        hook.after_run(run_context, tw.train.SessionRunValues(results))
    hook.end(session)
    assert requested == [True, False, True, False]
    assert writer.session_logs == [(tw.SessionLog.START, 1)]
    assert writer.scalars() == {1: [("loss", 0.0)], 3: [("loss", 20.0)]} and writer.flushes == 1


def test_a_summary_subclass_naming_no_tf_attribute_stays_native_H33(tmp_path):
    class Plain(tw.train.SummarySaverHook):
        pass

    class Reads(tw.train.SummarySaverHook):
        def after_run(self, run_context, run_values):
            super().after_run(run_context, run_values)
            self.next_steps = getattr(self, "next_steps", []) + [self._next_step]
    plain = Plain(save_steps=2, output_dir=str(tmp_path / "plain"), summary_op="loss")
    reads = Reads(save_steps=2, output_dir=str(tmp_path / "reads"), summary_op="loss")
    with tw.MonitoredTrainingSession(hooks=[plain, reads], save_summaries_steps=None,
                                     log_step_count_steps=None) as sess:
        assert plain._native in sess._handles and not plain._tw_python  # no Python per run
        assert reads._native not in sess._handles and reads._tw_python
        for _ in range(3):
            sess.run(train_step)
    assert reads.next_steps == [2, 3, 4]
    assert event_scalars(str(tmp_path / "plain"))[0] == event_scalars(str(tmp_path / "reads"))[0] == {
        1: [("loss", 1.0)], 3: [("loss", 1 / 3)]}


# --- ProfilerHook ------------------------------------------------------------------------------------------

def traced(directory, pattern="timeline-*.json"):
    """step → the span names of each trace in ``directory``."""
    out = {}
    for path in glob.glob(os.path.join(directory, pattern)):
        with open(path) as f:
            trace = json.load(f)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        step = int(os.path.basename(path).rpartition("-")[2].split(".")[0].rpartition("_")[2])
        out[step] = [e["name"] for e in events if e.get("ph") == "X"]
    return out


class EveryThirdProfiler(tw.train.ProfilerHook):
    def __init__(self, output_dir):
        super().__init__(save_steps=1, output_dir=output_dir)
        self._timer = tw.train.SecondOrStepTimer(every_steps=3)


def test_a_profiler_subclass_replacing_the_timer_traces_the_runs_tf_picks_H33_B47(tmp_path):
    hook = EveryThirdProfiler(str(tmp_path))
    train([tw.train.LoggingTensorHook(["loss"], every_n_iter=1), hook], 7)
    assert hook._tw_python
    traces = traced(str(tmp_path))
    assert sorted(traces) == [3, 6]  # never the first run; then every third step (B47)
    assert traces[3] == ["run", "LoggingTensorHook.before_run", "EveryThirdProfiler.before_run", "step",
                         "LoggingTensorHook.after_run", "EveryThirdProfiler.after_run"]  # the whole run


def test_a_replaced_output_file_pattern_names_the_traces_H33_B45(tmp_path):
    hook = tw.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path / "default"))
    hook._output_file = os.path.join(str(tmp_path / "mine"), "trace_{}.json")
    train([hook], 5)
    assert sorted(traced(str(tmp_path / "mine"), "trace_*.json")) == [2, 4]  # B47
    assert not glob.glob(str(tmp_path / "*" / "timeline-*.json"))


def test_a_profiler_subclass_overriding_save_is_called_with_tf_s_arguments_H33_B47(tmp_path):
    class Announces(tw.train.ProfilerHook):
        saves = []

        def _save(self, step, save_path, step_stats):
            self.saves.append((step, save_path))
            super()._save(step, save_path, step_stats)
    train([Announces(save_steps=2, output_dir=str(tmp_path))], 5)
    assert Announces.saves == [(2, str(tmp_path / "timeline-2.json")), (4, str(tmp_path / "timeline-4.json"))]
    assert sorted(traced(str(tmp_path))) == [2, 4]


def test_a_profiler_subclass_naming_no_tf_attribute_stays_native_H33_B47(tmp_path):
    class Plain(tw.train.ProfilerHook):
        pass
    plain = Plain(save_steps=2, output_dir=str(tmp_path))
    with tw.MonitoredTrainingSession(hooks=[plain], save_summaries_steps=None, log_step_count_steps=None) as sess:
        assert plain._native in sess._handles and not plain._tw_python
        for _ in range(5):
            sess.run(train_step)
    assert sorted(traced(str(tmp_path))) == [2, 4]


def test_a_profiler_driven_by_hand_picks_runs_as_tf_and_has_no_trace_to_save_B47():
    class Session:
        step = 0

        def run(self, fetches):
            return self.step

    session, hook = Session(), tw.train.ProfilerHook(save_steps=2)
    hook.begin()
    run_context = tw.train.SessionRunContext(tw.train.SessionRunArgs(None), session)
    picked = []
    for step in range(2):
        assert hook.before_run(run_context) == tw.train.SessionRunArgs({"global_step": "global_step"})
        picked.append(hook._request_summary)
        session.step = step + 1
        if hook._request_summary:
            with pytest.raises(RuntimeError, match="only a run of a session has a trace"):
                hook.after_run(run_context, tw.train.SessionRunValues({"global_step": step}))
            break
        hook.after_run(run_context, tw.train.SessionRunValues({"global_step": step}))
    assert picked == [False, True]  # the first run primes the timer; then the run ending at step 2


# --- FinalOpsHook ------------------------------------------------------------------------------------------

def test_a_final_ops_subclass_changing_final_ops_in_begin_gets_them_evaluated_H33_B43():
    class Metrics(tw.train.FinalOpsHook):
        def begin(self):
            self._final_ops = {"loss": "loss", "step": "global_step"}
    hook = Metrics("global_step")
    train([hook], 3)
    assert hook._tw_python
    assert hook.final_ops_values == {"loss": pytest.approx(1 / 3), "step": 3}  # the last run's loss, the step now


def test_a_final_ops_subclass_assigning_the_values_attribute_as_tf_H33_B43():
    class Eval(tw.train.FinalOpsHook):
        def __init__(self, final_ops, final_ops_feed_dict=None):
            super().__init__(final_ops, final_ops_feed_dict)
            self._final_ops_values = None  # TF's attribute: a plain one, as TF's __init__ sets it

        def end(self, session):
            super().end(session)
            self.doubled = {k: 2 * v for k, v in self._final_ops_values.items()}

    hook = Eval(lambda ctx: {"y": ctx.feeds["x"] + 1}, final_ops_feed_dict={"x": np.float32(1)})
    hook._final_ops_feed_dict = {"x": np.float32(5)}  # replaced before the session: end feeds it
    train([hook], 2)
    assert hook.final_ops_values == {"y": 6.0} and hook.doubled == {"y": 12.0}
    assert hook._final_ops_values is hook.final_ops_values


def test_a_final_ops_hook_ended_by_hand_runs_its_ops_on_the_session_H4_B43():
    with tw.MonitoredSession() as sess:
        raw = sess.raw_session()
        raw.set_global_step(5)
        by_name = tw.train.FinalOpsHook({"step": "global_step"})
        by_step = tw.train.FinalOpsHook(lambda ctx: {"twice": np.int64(2 * ctx.global_step)})
        assert by_name.final_ops_values is None
        by_name.end(raw)
        by_step.end(raw)
    assert by_name.final_ops_values == {"step": 5} and by_step.final_ops_values == {"twice": 10}


def test_a_final_ops_subclass_naming_no_tf_attribute_stays_native_H33(caplog):
    caplog.set_level(logging.WARNING, logger="trainwatch")

    class Plain(tw.train.FinalOpsHook):
        pass
    plain = Plain(["loss", "global_step"])
    with tw.MonitoredTrainingSession(hooks=[plain], save_summaries_steps=None, log_step_count_steps=None) as sess:
        assert not plain._tw_python  # the library's end; only the outputs' fetch runs in Python
        for _ in range(2):
            sess.run(train_step)
    assert plain.final_ops_values == [pytest.approx(0.5), 2] and plain._final_ops_values == plain.final_ops_values


def test_final_ops_replaced_by_a_subclass_that_run_out_of_input_warn_and_raise_as_tf_H33_B43(caplog):
    caplog.set_level(logging.WARNING, logger="trainwatch")

    def exhausted(ctx):
        raise tw.errors.OutOfRangeError(None, None, "input exhausted")

    class Eval(tw.train.FinalOpsHook):
        def begin(self):
            self._final_ops = exhausted
    hook = Eval(lambda ctx: {"a": np.float32(1)})
    with pytest.raises(tw.errors.OutOfRangeError, match="input exhausted"):
        train([hook], 1)
    assert any(r.getMessage().startswith("An OutOfRangeError or StopIteration exception is raised by the code in "
                                         "FinalOpsHook.") for r in caplog.records)
    assert hook.final_ops_values is None
