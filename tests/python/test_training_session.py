"""MonitoredTrainingSession's defaults and hook order (T2, T5–T8), NaN rollback, logging."""
import logging

import numpy as np
import pytest

import trainwatch as tw
from conftest import Recorder, loss_step


def checkpoint_steps(tmp_path):
    return sorted(int(p.name.split("-")[1]) for p in tmp_path.glob("model.ckpt-*"))


def test_default_checkpointing_saves_at_creation_and_end_T2(tmp_path):
    w = np.zeros(2, np.float32)
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w},
                                     hooks=[tw.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(loss_step())
    assert checkpoint_steps(tmp_path) == [0, 3]


def test_save_checkpoint_steps_T2(tmp_path):
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=2,
                                     variables={"w": np.zeros(1)}, hooks=[tw.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(loss_step())
    assert checkpoint_steps(tmp_path) == [0, 2, 4, 5]


def test_save_checkpoint_steps_none_alone_disables_checkpoints_T2(tmp_path):
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=None,
                                     variables={"w": np.zeros(1)}) as sess:
        sess.run(loss_step())
    assert checkpoint_steps(tmp_path) == []


def test_chief_only_hooks_come_first_and_workers_skip_them_T5_T6():
    log = []
    chief_only, user = Recorder("chief_only", log), Recorder("user", log)
    with tw.MonitoredTrainingSession(hooks=[user], chief_only_hooks=[chief_only]) as sess:
        sess.run(loss_step())
    assert log[:2] == [("chief_only", "begin"), ("user", "begin")]
    del log[:]
    with tw.MonitoredTrainingSession(is_chief=False, hooks=[user], chief_only_hooks=[chief_only]) as sess:
        sess.run(loss_step())
    assert all(name == "user" for name, *_ in log)


def test_resume_from_the_latest_checkpoint_T6(tmp_path):
    w = np.zeros(2, np.float32)

    def step(ctx):
        w[:] += 1
        return {"loss": np.float32(1)}
    for _ in range(2):
        with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w},
                                         hooks=[tw.StopAtStepHook(num_steps=3)]) as sess:
            while not sess.should_stop():
                sess.run(step)
    assert sess.global_step == 6
    np.testing.assert_array_equal(w, [6, 6])


def test_nan_rollback_restores_the_last_good_checkpoint_and_continues(tmp_path):
    w = np.zeros(2, np.float32)
    diverged = []

    def step(ctx):
        if ctx.global_step == 3 and not diverged:
            diverged.append(ctx.global_step)
            w[:] = np.nan
        else:
            w[:] += 1
        return {"loss": np.float32(w.sum())}
    nan_hook = tw.NanTensorHook("loss", action="rollback")
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=2, variables={"w": w},
                                     hooks=[nan_hook, tw.StopAtStepHook(last_step=6)]) as sess:
        while not sess.should_stop():
            sess.run(step)
    assert diverged == [3]
    assert np.isfinite(w).all() and sess.global_step == 6


def test_nan_callback_gets_the_event():
    events = []
    hook = tw.NanTensorHook("loss", on_nan=lambda session, event: events.append(
        (event.tensor_name, event.global_step, event.nan_count, event.first_nonfinite_index)))
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(lambda ctx: {"loss": np.array([1.0, np.nan])})
    assert events == [("loss", 0, 1, 1)]


def test_library_log_lines_go_to_the_trainwatch_logger(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": np.zeros(1)}) as sess:
        sess.run(loss_step())
    messages = [r.getMessage() for r in caplog.records if r.name == "trainwatch"]
    assert any(m.startswith("Saving checkpoints for 0 into") for m in messages)


def test_nan_warning_is_logged_at_warning_level_B34(caplog):
    with tw.MonitoredSession(hooks=[tw.NanTensorHook("loss", fail_on_nan_loss=False)]) as sess:
        sess.run(loss_step(float("nan")))
    assert any(r.levelno == logging.WARNING and "Model diverged with loss = NaN." in r.getMessage()
               for r in caplog.records)


def test_second_or_step_timer_B1_B2_B3():
    with pytest.raises(ValueError, match="Either every_secs or every_steps should be provided."):
        tw.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps."):
        tw.SecondOrStepTimer(every_secs=1, every_steps=1)
    timer = tw.SecondOrStepTimer(every_steps=10)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(0) and not timer.should_trigger_for_step(9)
    assert timer.should_trigger_for_step(10)
    assert timer.update_last_triggered_step(10)[1] == 10 and timer.last_triggered_step() == 10
