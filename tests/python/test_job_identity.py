"""Only a job's own checkpoints are its own (C19): a checkpoint of another run copied into a run
directory, or a user's copy of one of the job's checkpoints under another name, is never resumed from
by the name scan nor deleted by retention, and is reported once; the job's own are still found by name
after `rm checkpoint`; a foreign checkpoint restores on purpose, by its path, as in TF."""
import shutil

import numpy as np

import trainwatch as tw

from training_runs import train


def pretrained(tmp_path):
    """A checkpoint of step 5000 written by another run, in its own directory; its path."""
    other = tmp_path / "pretrained"
    other.mkdir()
    w = np.full(2, 7.0, np.float32)
    return tw.Saver({"w": w, "global_step": np.array(5000, np.int64)}).save(str(other / "model.ckpt"),
                                                                           global_step=5000)


def test_a_pretrained_checkpoint_copied_in_is_neither_resumed_nor_deleted_C19(tmp_path, caplog):
    run = tmp_path / "run"
    run.mkdir()
    copied = run / "model.ckpt-5000"
    shutil.copyfile(pretrained(tmp_path), copied)
    original = copied.read_bytes()
    w = np.zeros(2, np.float32)
    assert train(run, w, 8, max_to_keep=2) == 0  # not 5000: the copy is not this job's
    np.testing.assert_array_equal(w, [8, 8])
    assert train(run, w, 10, max_to_keep=2) == 8  # its own newest, after a restart
    assert copied.read_bytes() == original  # saves past max_to_keep never touched it
    assert sorted(p.name for p in run.glob("model.ckpt-*")) == ["model.ckpt-10", "model.ckpt-5000", "model.ckpt-8"]
    assert tw.latest_checkpoint(str(run)) == str(run / "model.ckpt-10")
    # Once per saver (the first session scanned twice: restore and recovery); the restarted session
    # has a state file and never scanned.
    reported = [r for r in caplog.records if r.levelname == "WARNING" and r.getMessage().startswith(
        f"Leaving {copied} alone: it is not this job's checkpoint (written as model.ckpt-5000 by job ")]
    assert len(reported) == 1


def test_a_users_copy_is_not_resumed_from_or_deleted_after_rm_checkpoint_C19(tmp_path):
    w = np.zeros(2, np.float32)
    train(tmp_path, w, 2, max_to_keep=5)  # model.ckpt-0, model.ckpt-2
    shutil.copyfile(tmp_path / "model.ckpt-2", tmp_path / "best-2")
    shutil.copyfile(tmp_path / "model.ckpt-0", tmp_path / "model.ckpt-7")  # an older state under a newer name
    best = (tmp_path / "best-2").read_bytes()
    (tmp_path / "checkpoint").unlink()
    w[:] = -100
    assert train(tmp_path, w, 8, max_to_keep=1) == 2  # its own model.ckpt-2, found by name
    np.testing.assert_array_equal(w, [8, 8])
    assert (tmp_path / "best-2").read_bytes() == best  # never deleted by retention
    assert (tmp_path / "model.ckpt-7").exists()
    assert sorted(p.name for p in tmp_path.glob("model.ckpt-*")) == ["model.ckpt-7", "model.ckpt-8"]


def test_rm_checkpoint_alone_resumes_from_the_newest_C19(tmp_path):
    w = np.zeros(2, np.float32)
    train(tmp_path, w, 4, max_to_keep=2)
    (tmp_path / "checkpoint").unlink()
    w[:] = -100
    assert train(tmp_path, w, 8, max_to_keep=2) == 4  # the job identity file survives
    assert sorted(p.name for p in tmp_path.glob("model.ckpt-*")) == ["model.ckpt-6", "model.ckpt-8"]


def test_a_foreign_checkpoint_restores_on_purpose_C19_S5(tmp_path):
    path = pretrained(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    copied = str(run / "model.ckpt-5000")
    shutil.copyfile(path, copied)
    w = np.zeros(2, np.float32)
    tw.Saver({"w": w}).restore(copied)  # Saver.restore(path)
    np.testing.assert_array_equal(w, [7, 7])
    w[:] = 0
    with tw.SingularMonitoredSession(scaffold=tw.Scaffold(variables={"w": w}),
                                     checkpoint_filename_with_path=copied) as sess:
        assert sess.global_step == 5000
    np.testing.assert_array_equal(w, [7, 7])
    w[:] = 0

    def init_fn(scaffold, session):  # Scaffold(init_fn=…): warm-starting from another run
        tw.Saver({"w": w}).restore(copied)

    with tw.MonitoredTrainingSession(checkpoint_dir=str(run), scaffold=tw.Scaffold(variables={"w": w}, init_fn=init_fn),
                                     save_checkpoint_steps=None) as sess:
        assert sess.global_step == 0  # a fresh job, warm-started
    np.testing.assert_array_equal(w, [7, 7])
