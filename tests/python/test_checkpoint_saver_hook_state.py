"""CheckpointSaverHook's ``_saver``, ``_save_path`` and ``_checkpoint_dir``, written as TF1 code writes
them (before the session, or in a subclass's begin before ``super().begin()``), take effect: every save
is then TF's ``_save`` in Python — listeners, ``_get_saver().save(session, self._save_path,
global_step=step)``, a CHECKPOINT session log in ``_checkpoint_dir``'s event file — and a trainwatch
Saver of the session's variables into the session's directory saves through the session (H33, C27)."""
import fcntl
import glob
import os

import numpy as np
import pytest

import trainwatch as tw


def names(directory, basename="model.ckpt"):
    return sorted((n for n in os.listdir(directory) if n.startswith(basename + "-")), key=lambda n: int(n.rsplit("-")[1]))


def lock_is_free(directory):
    path = os.path.join(directory, ".trainwatch.lock")
    if not os.path.exists(path):
        return True
    with open(path, "r+b") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
    return True


def checkpoint_logs(directory):
    """(step, checkpoint_path) of every CHECKPOINT session log of the directory's event files."""
    logs = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tw.summary.summary_iterator(path):
            if event.HasField("session_log") and event.session_log.status == tw.SessionLog.CHECKPOINT:
                logs.append((event.step, event.session_log.checkpoint_path))
    return logs


def train(d, hooks, steps, w=None, **kwargs):
    """A MonitoredSession restoring from and saving into ``d`` through ``hooks``."""
    w = np.zeros(2, np.float32) if w is None else w
    scaffold = kwargs.pop("scaffold", None) or tw.train.Scaffold(variables={"w": w})
    creator = tw.train.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=d)
    with tw.train.MonitoredSession(creator, hooks=hooks) as sess:
        for _ in range(steps):
            if sess.should_stop():
                break
            sess.run(lambda ctx: np.add(w, 1, out=w))
    return sess


def test_a_save_path_written_before_the_session_names_the_checkpoints_H33_C27(tmp_path):
    d = str(tmp_path)
    hook = tw.train.CheckpointSaverHook(d, save_steps=2)
    hook._save_path = os.path.join(d, "renamed.ckpt")
    sess = train(d, [hook], 5)
    assert hook._tw_python and hook._native not in sess._handles
    assert names(d, "renamed.ckpt") == ["renamed.ckpt-0", "renamed.ckpt-2", "renamed.ckpt-4", "renamed.ckpt-5"]
    assert names(d) == []
    assert tw.train.latest_checkpoint(d) == os.path.join(d, "renamed.ckpt-5")
    # TF's SessionLog CHECKPOINT names the save path, at the step saved.
    assert checkpoint_logs(d) == [(s, os.path.join(d, "renamed.ckpt")) for s in (0, 2, 4, 5)]
    # Saved through the session (its lock, its retention): a restart restores the last.
    w = np.zeros(2, np.float32)
    with tw.train.MonitoredSession(tw.train.ChiefSessionCreator(tw.train.Scaffold(variables={"w": w}),
                                                                checkpoint_dir=d)) as sess:
        assert sess.run("global_step") == 5
    np.testing.assert_array_equal(w, [5, 5])


def test_a_checkpoint_dir_written_in_begin_before_super_moves_the_saves_H33_C27(tmp_path):
    d, best = str(tmp_path / "train"), str(tmp_path / "best")
    os.makedirs(d)
    os.makedirs(best)

    class BestDir(tw.train.CheckpointSaverHook):
        def begin(self):
            self._checkpoint_dir = best
            self._save_path = os.path.join(best, "model.ckpt")
            super().begin()

    hook = BestDir(d, save_steps=3)
    train(d, [hook], 4)
    assert names(best) == ["model.ckpt-0", "model.ckpt-3", "model.ckpt-4"]
    assert names(d) == []
    assert [step for step, _ in checkpoint_logs(best)] == [0, 3, 4] and checkpoint_logs(d) == []
    assert not lock_is_free(best)  # the scaffold's saver saves outside the session's directory on its own
    hook._get_saver().close()
    assert lock_is_free(best)


class RecordingSaver:
    """Any object with TF's ``save(sess, save_path, global_step=None)``."""

    def __init__(self, calls):
        self.calls = calls

    def save(self, sess, save_path, global_step=None):
        self.calls.append(("save", type(sess).__name__, save_path, global_step))
        return f"{save_path}-{global_step}"


class RecordingListener(tw.train.CheckpointSaverListener):
    def __init__(self, calls, stop_at=None):
        self.calls = calls
        self.stop_at = stop_at

    def begin(self):
        self.calls.append("begin")

    def before_save(self, session, global_step_value):
        self.calls.append(("before", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after", global_step_value))
        return self.stop_at is not None and global_step_value >= self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_a_saver_written_before_the_session_saves_in_tfs_order_and_a_listener_stops_H33_B24(tmp_path):
    d = str(tmp_path)
    calls = []
    hook = tw.train.CheckpointSaverHook(d, save_steps=2, listeners=[RecordingListener(calls, stop_at=4)])
    hook._saver = RecordingSaver(calls)
    sess = train(d, [hook], 10)
    assert sess.global_step == 4  # the listener's stop after the save at step 4 (B22)
    prefix = os.path.join(d, "model.ckpt")
    assert calls == ["begin",
                     ("before", 0), ("save", "RawSession", prefix, 0), ("after", 0),
                     ("before", 2), ("save", "RawSession", prefix, 2), ("after", 2),
                     ("before", 4), ("save", "RawSession", prefix, 4), ("after", 4),
                     ("end", 4)]
    assert names(d) == []  # the object saved, not the library
    assert [step for step, _ in checkpoint_logs(d)] == [0, 2, 4]


def test_a_trainwatch_saver_written_in_begin_saves_through_the_session_H33_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(2, np.float32)

    saved_steps = []

    class CountingSaver(tw.train.Saver):
        def save(self, *args, global_step=None):
            saved_steps.append(global_step)
            return super().save(*args, global_step=global_step)

    class WithSaver(tw.train.CheckpointSaverHook):
        def begin(self):
            self._saver = CountingSaver({"w": w})  # TF1: self._saver = tf.train.Saver()
            super().begin()

    hook = WithSaver(d, save_steps=1)
    train(d, [hook], 3, w=w)
    assert saved_steps == [0, 1, 2, 3]  # the hook saved with its _saver
    assert names(d) == ["model.ckpt-0", "model.ckpt-1", "model.ckpt-2", "model.ckpt-3"]
    assert tw.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-3")
    assert lock_is_free(d)  # the session held the directory and released it at close; the Saver never took it
    np.testing.assert_array_equal(tw.train.load_variable(d, "w"), [3, 3])
    assert tw.train.load_variable(d, "global_step") == 3


def test_another_savers_save_into_the_sessions_directory_is_refused_with_advice_H33_C27(tmp_path):
    d = str(tmp_path)
    hook = tw.train.CheckpointSaverHook(d, save_steps=1)
    hook._saver = tw.train.Saver({"other": np.zeros(1, np.float32)})
    with pytest.raises(tw.errors.FailedPreconditionError, match=r"is in use: .*Scaffold\(saver=\.\.\.\)"):
        train(d, [hook], 1)
    hook._saver.close()


def test_the_saver_argument_alone_keeps_the_hook_native_H33(tmp_path):
    d = str(tmp_path)
    w = np.zeros(2, np.float32)
    hook = tw.train.CheckpointSaverHook(d, save_steps=2, saver=tw.train.Saver({"w": w}))
    sess = train(d, [hook], 3, w=w)
    assert not hook._tw_python and hook._native in sess._handles  # no Python per run
    assert names(d) == ["model.ckpt-0", "model.ckpt-2", "model.ckpt-3"]
