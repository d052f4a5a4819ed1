"""Misuse that used to crash returns an error: a variable resized or reallocated after
registration (numpy resize(refcheck=False), torch resize_()) raises ValueError before the library
touches its old memory; closing the session from inside its own hook or step raises; a listener's
stop request ends the run that saved, also with asynchronous saving (B22)."""
import numpy as np
import pytest
import torch

import trainwatch as tw


def session_over(variables, hooks=None):
    return tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables=variables)), hooks=hooks)


def test_numpy_variable_resized_after_registration_raises():
    w = np.zeros(4, np.float32)
    sess = session_over({"w": w})
    sess.run(lambda ctx: np.add(w, 1, out=w))
    w.resize(1 << 20, refcheck=False)  # reallocates: the registered memory is freed
    with pytest.raises(ValueError, match="variable 'w' was resized or reallocated after it was registered"):
        sess.run(lambda ctx: None)
    with pytest.raises(ValueError, match="resized or reallocated"):
        sess.close()  # end() would save it


def test_torch_variable_resized_after_registration_raises():
    w = torch.zeros(4)
    sess = session_over({"w": w})
    w.resize_(1 << 20)
    with pytest.raises(ValueError, match="variable 'w' was resized or reallocated"):
        sess.run(lambda ctx: None)


def test_resize_inside_the_step_fails_that_run_before_hooks_read_it(tmp_path):
    w = np.zeros(4, np.float32)
    hook = tw.CheckpointSaverHook(str(tmp_path), save_steps=1)
    sess = session_over({"w": w}, hooks=[hook])
    with pytest.raises(ValueError, match="resized or reallocated"):
        sess.run(lambda ctx: w.resize(1 << 20, refcheck=False))


def test_same_size_in_place_updates_are_fine():
    w = torch.zeros(4)
    sess = session_over({"w": w})
    for _ in range(3):
        sess.run(lambda ctx: w.add_(1))
    w.resize_(4)  # same size: the storage stays where it is
    sess.run(lambda ctx: None)
    sess.close()
    assert w.tolist() == [3.0] * 4


def test_saver_checks_its_variables_before_save_and_restore(tmp_path):
    w = np.ones(3, np.float32)
    saver = tw.Saver({"w": w})
    path = saver.save(str(tmp_path / "model.ckpt"), global_step=1)
    w.resize(1 << 20, refcheck=False)
    with pytest.raises(ValueError, match="variable 'w' was resized or reallocated"):
        saver.save(str(tmp_path / "model.ckpt"), global_step=2)
    with pytest.raises(ValueError, match="resized or reallocated"):
        saver.restore(path)


def test_close_inside_a_hook_raises_instead_of_freeing_the_session():
    class Closer(tw.SessionRunHook):
        def after_run(self, run_context, run_values):
            sess.close()

    w = np.zeros(1, np.float32)
    sess = session_over({"w": w}, hooks=[Closer()])
    with pytest.raises(tw.errors.FailedPreconditionError, match="from inside its own run"):
        sess.run(lambda ctx: None)
    sess.close()  # the failed run's session is still there to close


def test_close_inside_the_step_raises():
    sess = tw.MonitoredSession()
    with pytest.raises(tw.errors.FailedPreconditionError, match="from inside its own run"):
        sess.run(lambda ctx: sess.close())


class StopAt(tw.CheckpointSaverListener):
    def __init__(self, step):
        self.step, self.saved = step, []

    def after_save(self, session, global_step_value):
        self.saved.append(global_step_value)
        return global_step_value == self.step


@pytest.mark.parametrize("deferred", [False, True])
def test_async_listener_stop_ends_the_saving_run_B22(tmp_path, deferred):
    w = np.zeros(2, np.float32)
    listener = StopAt(4)
    hook = tw.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener], deferred_listeners=deferred)
    with session_over({"w": w}, hooks=[hook]) as sess:
        while not sess.should_stop() and sess.global_step < 20:
            sess.run(lambda ctx: np.add(w, 1, out=w))
        step = sess.global_step
    if deferred:
        assert step in (5, 6)  # after_save(4) comes in the first run that finds the write finished
    else:
        assert step == 4  # TF: the run that saved step 4 stops training
    assert 4 in listener.saved
