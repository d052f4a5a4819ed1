"""TF1's ``scaffold.saver.save(...)`` from a hook of a session whose CheckpointSaverHook holds the same
directory, unchanged apart from tf. → tw. and the graph → step edit: the save goes through the
session's own saver — its lock, state file and retention (C27) — while a saver of another directory
keeps its own; and a scaffold a session was created from always has a saver, as TF's finalize gives it."""
import fcntl
import os
import threading

import numpy as np
import pytest

import trainwatch as tw


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


def checkpoints(directory, basename="model.ckpt"):
    return sorted((name for name in os.listdir(directory) if name.startswith(basename + "-")),
                  key=lambda name: int(name.rsplit("-", 1)[1]))


class ScaffoldSaverHook(tw.train.SessionRunHook):
    """A TF1 hook library's best-model hook: saves with the scaffold's saver every ``every_n`` steps."""

    def __init__(self, scaffold, checkpoint_dir, every_n=1, basename="model.ckpt"):
        self._scaffold = scaffold
        self._save_path = os.path.join(checkpoint_dir, basename)
        self._every_n = every_n
        self.saved = []

    def before_run(self, run_context):
        return tw.train.SessionRunArgs(tw.train.get_global_step())

    def after_run(self, run_context, run_values):
        step = run_values.results
        if step % self._every_n == 0:
            self.saved.append(self._scaffold.saver.save(run_context.session, self._save_path, global_step=step))


def train_step(w):
    def step(ctx):
        w[:] += 1
    return step


def test_scaffold_saver_beside_the_checkpoint_saver_hook_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(2, np.float32)
    scaffold = tw.train.Scaffold(saver=tw.train.Saver({"w": w}, max_to_keep=2))
    hook = ScaffoldSaverHook(scaffold, d)
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, hooks=[hook],
                                           save_checkpoint_steps=100, save_summaries_steps=None) as sess:
        assert not lock_is_free(d)  # the session's CheckpointSaverHook holds the directory
        for _ in range(5):
            sess.run(train_step(w))
        assert [os.path.basename(p) for p in hook.saved] == [f"model.ckpt-{i}" for i in range(5)]
        assert tw.train.latest_checkpoint(d) == hook.saved[-1]
        assert checkpoints(d) == ["model.ckpt-3", "model.ckpt-4"]  # one retention: the saver's max_to_keep=2
    assert tw.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-5")  # the saver hook's final save
    # A restart restores the newest, with its step.
    w[:] = 0
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, variables={"w": w}, save_checkpoint_secs=None,
                                           save_checkpoint_steps=None, save_summaries_steps=None) as sess:
        assert sess.run("global_step") == 5
    np.testing.assert_array_equal(w, [5, 5])
    scaffold.saver.close()


def test_a_hook_save_in_a_session_that_only_restores_then_a_restart_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(1, np.float32)
    scaffold = tw.train.Scaffold(saver=tw.train.Saver({"w": w}))
    hook = ScaffoldSaverHook(scaffold, d, every_n=3, basename="best.ckpt")
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, hooks=[hook], save_checkpoint_secs=None,
                                           save_checkpoint_steps=None, save_summaries_steps=None) as sess:
        for _ in range(4):
            sess.run(train_step(w))
        assert tw.train.latest_checkpoint(d) == os.path.join(d, "best.ckpt-3")
        # As in TF: named by the step the hook fetched, holding the variables and step after the run.
        assert tw.train.load_variable(hook.saved[-1], "global_step") == 4
        assert not lock_is_free(d)  # the session's saver took the directory at its first save
    assert lock_is_free(d)  # and released it at close
    w[:] = 0
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, variables={"w": w}, save_checkpoint_secs=None,
                                           save_checkpoint_steps=None, save_summaries_steps=None) as sess:
        assert sess.run("global_step") == 4
    np.testing.assert_array_equal(w, [4])
    scaffold.saver.close()


def test_scaffold_saver_beside_a_restoring_chief_session_creator_and_a_saver_hook_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(2, np.float32)
    with tw.train.Saver({"w": w}) as saver:  # an earlier run's checkpoint
        w[:] = 3
        saver.save(os.path.join(d, "model.ckpt"), global_step=3)
    w[:] = 0
    scaffold = tw.train.Scaffold(variables={"w": w}, saver=tw.train.Saver({"w": w}))
    hook = ScaffoldSaverHook(scaffold, d, every_n=2)
    saver_hook = tw.train.CheckpointSaverHook(d, save_steps=100, scaffold=scaffold)
    creator = tw.train.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=d)
    with tw.train.MonitoredSession(creator, hooks=[saver_hook, hook]) as sess:
        assert sess.run("global_step") == 3
        np.testing.assert_array_equal(w, [3, 3])
        while sess.run("global_step") < 9:
            sess.run(train_step(w))
    assert [os.path.basename(p) for p in hook.saved] == ["model.ckpt-4", "model.ckpt-6", "model.ckpt-8"]
    assert tw.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-9")  # the saver hook's end
    w[:] = 0
    with tw.train.MonitoredSession(tw.train.ChiefSessionCreator(checkpoint_filename_with_path=hook.saved[-1],
                                                                scaffold=tw.train.Scaffold(variables={"w": w}))) as sess:
        assert sess.run("global_step") == 9  # as in TF: the step after the run that saved "-8"
    np.testing.assert_array_equal(w, [9, 9])
    scaffold.saver.close()


def test_scaffold_saver_into_the_saver_hooks_directory_of_a_session_without_one_C27(tmp_path):
    """TF's common MonitoredSession: a ChiefSessionCreator without checkpoint_dir, the saving directory
    given to the CheckpointSaverHook only; a hook's scaffold.saver.save there goes through the session."""
    d = str(tmp_path)
    w = np.zeros(2, np.float32)
    scaffold = tw.train.Scaffold(variables={"w": w}, saver=tw.train.Saver({"w": w}, max_to_keep=2))
    hook = ScaffoldSaverHook(scaffold, d, every_n=2)
    saver_hook = tw.train.CheckpointSaverHook(d, save_steps=100, scaffold=scaffold)
    with tw.train.MonitoredSession(tw.train.ChiefSessionCreator(scaffold=scaffold), hooks=[saver_hook, hook]) as sess:
        assert not lock_is_free(d)  # the saver hook's directory, held by the session's saver
        for _ in range(5):
            sess.run(train_step(w))
        assert [os.path.basename(p) for p in hook.saved] == ["model.ckpt-0", "model.ckpt-2", "model.ckpt-4"]
        assert tw.train.latest_checkpoint(d) == hook.saved[-1]
        assert checkpoints(d) == ["model.ckpt-2", "model.ckpt-4"]  # one retention: max_to_keep=2
    assert lock_is_free(d)
    assert tw.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-5")  # the saver hook's end
    scaffold.saver.close()


def test_the_default_scaffold_has_a_saver_over_its_variables_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(1, np.float32)
    scaffold = tw.train.Scaffold(variables={"w": w})
    assert scaffold.saver is None  # not finalized yet
    hook = ScaffoldSaverHook(scaffold, d, every_n=2)
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, hooks=[hook],
                                           save_checkpoint_steps=100, save_summaries_steps=None) as sess:
        assert isinstance(scaffold.saver, tw.train.Saver)  # TF's Scaffold.finalize() made one
        assert scaffold.saver.variables["w"] is w
        for _ in range(3):
            sess.run(train_step(w))
    assert [os.path.basename(p) for p in hook.saved] == ["model.ckpt-0", "model.ckpt-2"]
    assert scaffold.finalize() is scaffold and scaffold.saver is scaffold.saver


def test_a_saver_of_the_sessions_variables_made_in_a_hook_C27(tmp_path):
    """TF1's ``self._saver = tf.train.Saver()`` in a hook's begin: a saver over every variable."""
    d = str(tmp_path)
    variables = {"w": np.zeros(2, np.float32), "b": np.zeros(1, np.float32)}

    class BestModelHook(tw.train.SessionRunHook):
        def begin(self):
            self._saver = tw.train.Saver(variables)
            self.saved = []

        def after_run(self, run_context, run_values):
            self.saved.append(self._saver.save(run_context.session, os.path.join(d, "best"), global_step=None))

        def end(self, session):
            self._saver.close()

    hook = BestModelHook()
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, variables=variables, hooks=[hook],
                                           save_checkpoint_steps=100, save_summaries_steps=None) as sess:
        sess.run(train_step(variables["w"]))
    assert hook.saved == [os.path.join(d, "best")]
    assert tw.train.load_variable(os.path.join(d, "best"), "global_step") == 1


def test_a_saver_of_another_directory_keeps_its_own_lock_and_retention_C27(tmp_path):
    d, elsewhere = str(tmp_path / "train"), str(tmp_path / "best")
    os.makedirs(d)
    os.makedirs(elsewhere)
    w = np.zeros(1, np.float32)
    scaffold = tw.train.Scaffold(saver=tw.train.Saver({"w": w}, max_to_keep=1))
    hook = ScaffoldSaverHook(scaffold, elsewhere)
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, hooks=[hook],
                                           save_checkpoint_steps=100, save_summaries_steps=None) as sess:
        for _ in range(3):
            sess.run(train_step(w))
        assert scaffold.saver.last_checkpoints == [os.path.join(elsewhere, "model.ckpt-2")]  # its own list
    assert checkpoints(elsewhere) == ["model.ckpt-2"]
    assert not lock_is_free(elsewhere)  # held by the Saver itself until closed
    assert checkpoints(d) == ["model.ckpt-3"]  # only the saver hook's, kept by the same max_to_keep=1
    scaffold.saver.close()
    assert lock_is_free(elsewhere)


def test_after_the_session_the_saver_saves_on_its_own_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(1, np.float32)
    scaffold = tw.train.Scaffold(saver=tw.train.Saver({"w": w}))
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, save_checkpoint_steps=100,
                                           save_summaries_steps=None) as sess:
        sess.run(train_step(w))
    assert lock_is_free(d)
    path = scaffold.saver.save(None, os.path.join(d, "model.ckpt"), global_step=10)
    assert path == os.path.join(d, "model.ckpt-10") and not lock_is_free(d)  # the Saver's own lock now
    scaffold.saver.close()


def test_a_saver_that_is_not_the_sessions_is_told_what_to_do_C27(tmp_path):
    d = str(tmp_path)
    w = np.zeros(1, np.float32)
    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, variables={"w": w}, save_checkpoint_steps=100,
                                           save_summaries_steps=None) as sess:
        sess.run(train_step(w))
        with tw.train.Saver({"w": w.copy()}) as other:  # other memory: not the session's variables
            with pytest.raises(tw.errors.FailedPreconditionError,
                               match=r"is in use: a session with a CheckpointSaverHook.*Scaffold\(saver=\.\.\.\)"):
                other.save(sess, os.path.join(d, "model.ckpt"), global_step=1)


def test_tfs_save_keywords_are_accepted_C27(tmp_path):
    """TF1's ``saver.save(sess, path, global_step=step, write_meta_graph=False)``: graph-only keywords."""
    w = np.zeros(1, np.float32)
    prefix = str(tmp_path / "model.ckpt")
    with tw.train.Saver({"w": w}) as saver:
        assert saver.save(None, prefix, global_step=1, write_meta_graph=False, meta_graph_suffix="meta",
                          strip_default_attrs=True, save_debug_info=False, latest_filename="checkpoint") == prefix + "-1"
        with pytest.raises(ValueError, match="latest_filename"):
            saver.save(None, prefix, global_step=2, latest_filename="other")
        with pytest.raises(ValueError, match="write_state"):
            saver.save(None, prefix, global_step=2, write_state=False)
    assert tw.train.latest_checkpoint(str(tmp_path)) == prefix + "-1"


def test_a_save_from_another_thread_does_not_enter_the_session_C27(tmp_path):
    """A session is used by one thread at a time: another thread's save is its Saver's own (refused by the
    session's lock), never a second thread inside the session that would refuse the next run."""
    d = str(tmp_path)
    w = np.zeros(1, np.float32)
    scaffold = tw.train.Scaffold(saver=tw.train.Saver({"w": w}))
    errors = []

    def save_elsewhere():
        try:
            scaffold.saver.save(None, os.path.join(d, "model.ckpt"), global_step=100)
        except tw.errors.FailedPreconditionError as error:
            errors.append(str(error))

    with tw.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold, save_checkpoint_steps=100,
                                           save_summaries_steps=None) as sess:
        sess.run(train_step(w))
        thread = threading.Thread(target=save_elsewhere)
        thread.start()
        thread.join()
        sess.run(train_step(w))
        assert scaffold.saver.save(sess, os.path.join(d, "model.ckpt"), global_step=2) == os.path.join(d, "model.ckpt-2")
    assert len(errors) == 1 and "is in use: a session with a CheckpointSaverHook" in errors[0]
    assert not os.path.exists(os.path.join(d, "model.ckpt-100"))
    scaffold.saver.close()
