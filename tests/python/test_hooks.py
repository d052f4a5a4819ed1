"""The other built-in hooks from Python: LoggingTensor (B6–B10), StepCounter (B26–B30), SummarySaver
(B35–B40, B49), FeedFn (B44), FinalOps (B43), GlobalStepWaiter (B41–B42), Profiler (B45–B47), and what
MonitoredTrainingSession adds by default (T6, T7, T11)."""
import json
import logging

import numpy as np
import pytest
import torch

import trainwatch as tw
from conftest import Recorder


def run_steps(hooks, steps, step=None, **session_args):
    step = step or (lambda ctx: {"loss": np.float32(ctx.global_step) / 2, "acc": np.float32(0.25)})
    with tw.MonitoredSession(hooks=hooks, **session_args) as sess:
        for _ in range(steps):
            sess.run(step)
    return sess


def trainwatch_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "trainwatch"]


def events(directory):
    return [e for path in sorted(directory.glob("events.out.tfevents.*")) for e in tw.summary_iterator(path)]


def test_logging_tensor_hook_logs_every_n_iter_from_the_first_run_B8_B9(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    run_steps([tw.LoggingTensorHook(["loss"], every_n_iter=2)], 5)
    lines = [m for m in trainwatch_lines(caplog) if m.startswith("loss = ")]
    assert [m.split(" (")[0] for m in lines] == ["loss = 0.0", "loss = 1.0", "loss = 2.0"]


def test_logging_tensor_hook_dict_tags_print_sorted_B7(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    run_steps([tw.LoggingTensorHook({"z_loss": "loss", "a_acc": "acc"}, every_n_iter=1)], 1)
    assert "a_acc = 0.25, z_loss = 0.0" in trainwatch_lines(caplog)


def test_logging_tensor_hook_formatter_B9(caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    run_steps([tw.LoggingTensorHook(["loss"], every_n_iter=1, formatter=lambda v: f"custom {float(v['loss']):.1f}")], 2)
    assert any(m.startswith("custom 0.5") for m in trainwatch_lines(caplog))


def test_logging_tensor_hook_arguments_B6():
    with pytest.raises(ValueError, match="either at_end and/or exactly one of every_n_iter and every_n_secs"):
        tw.LoggingTensorHook(["loss"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0."):
        tw.LoggingTensorHook(["loss"], every_n_iter=0)


def test_step_counter_hook_writes_the_rate_B28(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    run_steps([tw.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))], 6)
    rates = [e for e in events(tmp_path) if "global_step/sec" in e.scalars]
    assert [e.step for e in rates] == [3, 5]
    assert any(m.startswith("global_step/sec: ") for m in trainwatch_lines(caplog))


def test_step_counter_hook_arguments_B26():
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs should be provided."):
        tw.StepCounterHook(every_n_steps=None)


def test_summary_saver_hook_writes_scalars_and_start_B38_B39(tmp_path):
    run_steps([tw.SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=["loss"])], 5)
    written = events(tmp_path)
    assert written[0].file_version == "brain.Event:2"
    assert any(e.session_log_status == 1 for e in written)  # SessionLog START on the first run
    assert [(e.step, e.scalars["loss"]) for e in written if "loss" in e.scalars] == [(1, 0.0), (3, 1.0), (5, 2.0)]


def test_summary_saver_hook_arguments_B35():
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op must be provided."):
        tw.SummarySaverHook(save_steps=1, output_dir="x")
    with pytest.raises(ValueError, match="At least one of output_dir or summary_writer must be provided."):
        tw.SummarySaverHook(save_steps=1, summary_op="loss")


def histogram_tags(directory):
    return sorted(tag for e in events(directory) if e.tags for tag in e.tags if tag not in e.scalars)


def test_summary_saver_hook_writes_histograms_only_when_asked_B49(tmp_path):
    def step(ctx):
        return {"loss": np.float32(1), "w": np.arange(6, dtype=np.float32), "b": np.ones(3, np.float32)}
    run_steps([tw.SummarySaverHook(save_steps=10, output_dir=str(tmp_path / "all"), scaffold=tw.Scaffold())], 1, step)
    assert histogram_tags(tmp_path / "all") == []  # every value summarised: scalars only
    assert [tag for e in events(tmp_path / "all") for tag in e.scalars] == ["loss"]
    run_steps([tw.SummarySaverHook(save_steps=10, output_dir=str(tmp_path / "w"), scaffold=tw.Scaffold(),
                                   histograms=["w*"])], 1, step)
    assert histogram_tags(tmp_path / "w") == ["w"]
    run_steps([tw.SummarySaverHook(save_steps=10, output_dir=str(tmp_path / "named"), summary_op=["loss", "b"])], 1,
              step)
    assert histogram_tags(tmp_path / "named") == ["b"]  # named in summary_op: asked for
    with pytest.raises(ValueError, match="histograms takes non-empty names or patterns without ','"):
        tw.SummarySaverHook(save_steps=1, output_dir=str(tmp_path), summary_op="loss", histograms=["a,b"])


def test_monitored_training_session_histograms_only_of_summary_histograms_T11(tmp_path):
    weights = {"dense/kernel": np.zeros((64, 64), np.float32), "dense/bias": np.zeros(64, np.float32)}
    for name, asked in [("default", None), ("asked", ["dense/k*"])]:
        with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / name), variables=weights,
                                         summary_histograms=asked) as sess:
            sess.run(lambda ctx: {"loss": np.float32(0.5)})
        assert [tag for e in events(tmp_path / name) for tag in e.scalars] == ["loss"]
        assert histogram_tags(tmp_path / name) == ([] if asked is None else ["dense/kernel"])


def test_feed_fn_hook_feeds_the_step_the_very_objects_B44():
    batches = iter([torch.ones(2), torch.zeros(2)])
    fed = []
    seen = []

    def feed_fn():
        fed.append(next(batches))
        return {"x": fed[-1]}
    run_steps([tw.FeedFnHook(feed_fn)], 2, step=lambda ctx: seen.append(ctx.feeds["x"]))
    assert seen[0] is fed[0] and seen[1] is fed[1]


def test_feed_fn_hook_conflicts_with_the_caller_H23():
    with pytest.raises(tw.FeedConflictError):
        with tw.MonitoredSession(hooks=[tw.FeedFnHook(lambda: {"x": np.float32(1)})]) as sess:
            sess.run(lambda ctx: None, feed_dict={"x": np.float32(2)})


def test_feed_fn_exceptions_surface():
    def feed_fn():
        raise StopIteration  # an exhausted input pipeline: a clean end (H15)
    log = []
    with tw.MonitoredSession(hooks=[tw.FeedFnHook(feed_fn), Recorder("r", log)]) as sess:
        sess.run(lambda ctx: None)
    assert ("r", "end") in log


def test_final_ops_hook_runs_once_at_end_B43():
    w = np.full(3, 2.0, np.float32)
    hook = tw.FinalOpsHook(lambda ctx: {"total": np.float32(w.sum() + ctx.feeds["bias"])},
                           final_ops_feed_dict={"bias": np.float32(1)})
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(lambda ctx: None)
        assert hook.final_ops_values is None
    assert hook.final_ops_values == {"total": np.float32(7)}


def test_global_step_waiter_waits_for_the_shared_step_B42():
    reads = []

    def shared_step(session):
        reads.append(len(reads) * 5)
        return reads[-1]
    hook = tw.GlobalStepWaiterHook(10, poll_secs=0.001, global_step_fn=shared_step)
    run_steps([hook], 2)
    assert reads == [0, 5, 10]  # polled until the target, then never again


def test_global_step_waiter_bounded_wait():
    hook = tw.GlobalStepWaiterHook(100, poll_secs=0.001, max_wait_secs=0.01)
    with pytest.raises(tw.DeadlineExceededError, match="Global step did not reach 100"):
        run_steps([hook], 1)


def test_profiler_hook_writes_chrome_traces_B45_B47(tmp_path):
    run_steps([tw.ProfilerHook(save_steps=2, output_dir=str(tmp_path))], 5)
    timelines = sorted(p.name for p in tmp_path.glob("timeline-*.json"))
    assert timelines and "timeline-1.json" not in timelines  # never the first run
    trace = json.loads((tmp_path / timelines[0]).read_text())
    names = {event.get("name") for event in trace["traceEvents"]}
    assert "step" in names


def test_training_session_adds_summaries_and_step_counter_T6_T7(tmp_path):
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2, log_step_count_steps=2,
                                     variables={"w": np.zeros(2, np.float32)}) as sess:
        for _ in range(5):
            sess.run(lambda ctx: {"loss": np.float32(1.5)})
    written = events(tmp_path)
    assert any("loss" in e.scalars for e in written)
    assert any("global_step/sec" in e.scalars for e in written)
    assert any(e.session_log_status == 3 for e in written)  # the CheckpointSaverHook's CHECKPOINT events


def test_training_session_frequency_pairs_are_validated_T3(tmp_path):
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps."):
        tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_secs=10, save_checkpoint_steps=10)


def test_training_session_is_a_monitored_session_T8(tmp_path):
    with tw.MonitoredTrainingSession() as sess:
        assert isinstance(sess, tw.MonitoredSession)
