"""TF1 checkpoint patterns, unchanged apart from tf. → tw. and the graph → step edit: a session that
only restores leaves its directory to the program's own Saver (C24), a Saver releases its directory
when closed (C25), and an explicit checkpoint path restores a standalone Saver's file (S17)."""
import fcntl
import gc
import os

import numpy as np
import pytest

import trainwatch as tw


def lock_is_free(directory):
    """Nobody holds the directory's lock: the lock file is absent, or this test can take it."""
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


class ScaffoldSaverHook(tw.SessionRunHook):
    """A TF1 hook library's checkpoint hook: saves with the scaffold's saver every ``every_n`` steps."""

    def __init__(self, scaffold, checkpoint_dir, every_n):
        self._scaffold = scaffold
        self._dir = checkpoint_dir
        self._prefix = os.path.join(checkpoint_dir, "model.ckpt")
        self._every_n = every_n
        self.saved = []
        self.lock_free_in_runs = []  # before the hook's first save, nobody holds the directory

    def before_run(self, run_context):
        return tw.SessionRunArgs("global_step")

    def after_run(self, run_context, run_values):
        step = run_values.results
        if not self.saved:
            self.lock_free_in_runs.append(lock_is_free(self._dir))
        if step % self._every_n == 0:
            self.saved.append(self._scaffold.saver.save(run_context.session, self._prefix, global_step=step))


def train_step(w):
    def step(ctx):
        w[:] += 1
    return step


def test_saver_hook_beside_a_restoring_chief_session_creator_C24(tmp_path):
    d = str(tmp_path)
    w = np.zeros(2, np.float32)
    with tw.Saver({"w": w}) as saver:  # an earlier run's checkpoint
        w[:] = 3
        saver.save(os.path.join(d, "model.ckpt"), global_step=3)
    w[:] = 0
    scaffold = tw.Scaffold(variables={"w": w}, saver=tw.Saver({"w": w}))
    hook = ScaffoldSaverHook(scaffold, d, every_n=2)
    with tw.MonitoredSession(tw.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=d), hooks=[hook]) as sess:
        assert sess.run("global_step") == 3  # restored, the step from the file's name
        np.testing.assert_array_equal(w, [3, 3])
        assert lock_is_free(d)  # the session only restores: it took no lock
        while sess.run("global_step") < 9:  # runs at steps 3..8, the hook saving at 4, 6 and 8
            sess.run(train_step(w))
    assert hook.lock_free_in_runs == [True, True]
    assert [os.path.basename(p) for p in hook.saved] == ["model.ckpt-4", "model.ckpt-6", "model.ckpt-8"]
    assert tw.latest_checkpoint(d) == hook.saved[-1]
    scaffold.saver.close()
    # The next run resumes from the hook's last save, which went through the session (C27): it holds the
    # session's global step after that run, as TF's saver saves the global step variable.
    w[:] = 0
    with tw.MonitoredSession(tw.ChiefSessionCreator(scaffold=tw.Scaffold(variables={"w": w}), checkpoint_dir=d)) as sess:
        assert sess.run("global_step") == 9
    np.testing.assert_array_equal(w, [9, 9])  # as saved after the run of step 8


def test_saver_hook_in_a_monitored_training_session_that_saves_nothing_itself_C24(tmp_path):
    d = str(tmp_path)
    w = np.zeros(2, np.float32)
    scaffold = tw.Scaffold(variables={"w": w}, saver=tw.Saver({"w": w}))
    hook = ScaffoldSaverHook(scaffold, d, every_n=3)
    with tw.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, hooks=[hook], save_checkpoint_secs=None,
                                     save_checkpoint_steps=None, save_summaries_steps=None) as sess:
        while sess.run("global_step") < 7:
            sess.run(train_step(w))
    assert [os.path.basename(p) for p in hook.saved] == ["model.ckpt-0", "model.ckpt-3", "model.ckpt-6"]
    # With MonitoredTrainingSession's own CheckpointSaverHook the directory has a writer already: the
    # scaffold's saver then saves through the session (C27).
    scaffold.saver.close()
    scaffold = tw.Scaffold(variables={"w": w}, saver=tw.Saver({"w": w}))
    hook = ScaffoldSaverHook(scaffold, d, every_n=1)
    with tw.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, hooks=[hook],
                                     save_summaries_steps=None) as sess:
        assert not lock_is_free(d)
        sess.run(train_step(w))
    assert [os.path.basename(p) for p in hook.saved] == ["model.ckpt-7"]
    scaffold.saver.close()


def test_a_refused_writer_is_told_who_holds_the_directory_C24(tmp_path):
    d = str(tmp_path)
    w = np.zeros(1, np.float32)
    with tw.MonitoredTrainingSession(checkpoint_dir=d, variables={"w": w}, save_checkpoint_steps=1) as sess:
        sess.run(lambda ctx: None)
        with pytest.raises(tw.FailedPreconditionError,
                           match=f"checkpoint directory {d} is in use: a session with a CheckpointSaverHook of this "
                                 "process"):
            tw.Saver({"v": w}).save(os.path.join(d, "model.ckpt"), global_step=5)  # not the session's saver (C27)
    with tw.Saver({"w": w}) as saver:
        saver.save(os.path.join(d, "model.ckpt"), global_step=5)
        with pytest.raises(tw.FailedPreconditionError, match="is in use: a Saver of this process"):
            tw.MonitoredTrainingSession(checkpoint_dir=d, variables={"w": w})


def test_a_saver_closed_and_reopened_in_one_process_C25(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    w = np.ones(2, np.float32)
    first = tw.Saver({"w": w})
    first.save(prefix, global_step=1)
    second = tw.Saver({"w": w})  # a notebook cell run again
    with pytest.raises(tw.FailedPreconditionError, match="is in use: a Saver of this process"):
        second.save(prefix, global_step=2)
    first.close()
    assert second.save(prefix, global_step=2) == prefix + "-2"
    first.close()  # again: nothing
    with pytest.raises(tw.FailedPreconditionError, match="this Saver is closed"):
        first.save(prefix, global_step=3)
    with pytest.raises(tw.FailedPreconditionError, match="this Saver is closed"):
        first.restore(prefix + "-2")
    with pytest.raises(tw.FailedPreconditionError, match="this Saver is closed"):
        first.last_checkpoints
    # An unclosed saver still releases the directory when garbage collected.
    del second
    gc.collect()
    third = tw.Saver({"w": w})
    assert third.save(prefix, global_step=3) == prefix + "-3"
    third.close()
    assert lock_is_free(str(tmp_path))


def test_a_context_managed_saver_releases_at_the_end_of_the_block_C25(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    w = np.ones(2, np.float32)
    with tw.Saver({"w": w}) as saver:
        assert saver.save(prefix, global_step=1) == prefix + "-1"
        assert not lock_is_free(str(tmp_path))
    assert lock_is_free(str(tmp_path))
    with pytest.raises(tw.FailedPreconditionError, match="this Saver is closed"):
        saver.save(prefix, global_step=2)
    with tw.Saver({"w": w}) as again:  # a test that trains twice
        assert again.save(prefix, global_step=2) == prefix + "-2"
    # An exception inside the block releases it too, and passes through.
    with pytest.raises(ZeroDivisionError):
        with tw.Saver({"w": w}) as failing:
            failing.save(prefix, global_step=3)
            1 / 0
    assert lock_is_free(str(tmp_path))


def test_an_explicit_path_restores_a_standalone_savers_file_S17(tmp_path):
    w = np.full(2, 5.0, np.float32)
    with tw.Saver({"w": w}) as saver:
        path = saver.save(str(tmp_path / "model.ckpt"), global_step=7)
    assert "global_step" not in [name for name, _ in tw.list_variables(path)]
    w[:] = 0
    creator = tw.ChiefSessionCreator(scaffold=tw.Scaffold(variables={"w": w}), checkpoint_filename_with_path=path)
    with tw.MonitoredSession(creator) as sess:
        assert sess.run("global_step") == 7
        np.testing.assert_array_equal(w, [5, 5])
        sess.run(train_step(w))
        assert sess.run("global_step") == 8
    w[:] = 0
    with tw.SingularMonitoredSession(scaffold=tw.Scaffold(variables={"w": w}), checkpoint_filename_with_path=path) as sess:
        assert sess.global_step == 7
    np.testing.assert_array_equal(w, [5, 5])


def test_an_explicit_path_without_a_step_keeps_the_initial_step_S17(tmp_path, caplog):
    w = np.full(2, 5.0, np.float32)
    with tw.Saver({"w": w}) as saver:
        path = saver.save(str(tmp_path / "best"))  # no global_step: the prefix as-is (C1)
    w[:] = 0
    with tw.SingularMonitoredSession(scaffold=tw.Scaffold(variables={"w": w}), checkpoint_filename_with_path=path) as sess:
        assert sess.global_step == 0
    np.testing.assert_array_equal(w, [5, 5])
    assert "holds no global_step and its name carries none" in caplog.text
