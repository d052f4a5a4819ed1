"""Saver, checkpoint functions, Scaffold init_fn, session creators and listeners (S5, S7, S13, B17–B24, C*)."""
import hashlib
import os
import threading

import numpy as np
import pytest
import torch

import trainwatch as tw


def test_saver_names_files_and_keeps_max_to_keep(tmp_path):
    w = np.zeros(3, np.float32)
    saver = tw.Saver({"w": w}, max_to_keep=2)
    prefix = str(tmp_path / "model.ckpt")
    paths = [saver.save(prefix, global_step=step) for step in (1, 2, 3)]
    assert paths == [prefix + "-1", prefix + "-2", prefix + "-3"]
    assert saver.last_checkpoints == paths[1:]
    assert not os.path.exists(paths[0])
    assert tw.latest_checkpoint(str(tmp_path)) == paths[2]


def test_saver_accepts_tf_style_session_argument(tmp_path):
    w = np.ones(2, np.float32)
    saver = tw.Saver({"w": w})
    path = saver.save(object(), str(tmp_path / "m"), global_step=7)
    w[:] = 0
    saver.restore(object(), path)
    np.testing.assert_array_equal(w, [1, 1])


def test_save_errors_are_tfs_C4(tmp_path):
    saver = tw.Saver({"w": np.ones(2, np.float32)})
    missing = str(tmp_path / "missing" / "model.ckpt")
    with pytest.raises(ValueError, match=r"^Parent directory of .*missing/model\.ckpt-3 doesn't exist, can't save\.$"):
        saver.save(object(), missing, global_step=3)
    assert not os.path.exists(tmp_path / "missing")
    with pytest.raises(ValueError, match="latest_filename"):
        saver.save(str(tmp_path / "model.ckpt"), latest_filename="other")
    assert tw.Saver({}).save(str(tmp_path / "empty.ckpt")) is None
    assert os.listdir(tmp_path) == []


def test_evicted_checkpoint_files_are_recycled_C15(tmp_path):
    """recycle_files=True, max_to_keep=1: the third save overwrites the first one's file (its inode) and
    restores exactly; a user's hard link to a checkpoint keeps its bytes; the saver's spare goes with
    the saver."""
    w = np.zeros(4096, np.float32)
    saver = tw.Saver({"w": w}, max_to_keep=1, recycle_files=True)
    prefix = str(tmp_path / "model.ckpt")
    spare = tmp_path / ".tw-spare-0"
    w[:] = 1
    first = saver.save(prefix, global_step=1)
    first_inode = os.stat(first).st_ino
    w[:] = 2
    second = saver.save(prefix, global_step=2)
    os.link(second, tmp_path / "my-copy")
    assert os.stat(spare).st_ino == first_inode
    w[:] = 3
    third = saver.save(prefix, global_step=3)
    assert os.stat(third).st_ino == first_inode
    assert not spare.exists()  # the second is linked twice: deleted, not recycled
    w[:] = 4
    fourth = saver.save(prefix, global_step=4)
    assert os.stat(fourth).st_ino != os.stat(tmp_path / "my-copy").st_ino
    np.testing.assert_array_equal(tw.load_variable(str(tmp_path / "my-copy"), "w"), np.full(4096, 2, np.float32))
    w[:] = 0
    saver.restore(fourth)
    np.testing.assert_array_equal(w, np.full(4096, 4, np.float32))
    assert spare.exists()  # the third's file
    del saver
    assert not spare.exists()
    assert sorted(os.listdir(tmp_path)) == [".trainwatch.job", ".trainwatch.lock", "checkpoint", "model.ckpt-4", "my-copy"]


def test_evicted_checkpoint_files_are_deleted_by_default_C15(tmp_path):
    """By default an evicted checkpoint's file is unlinked, as TF deletes it: no spare is ever kept."""
    w = np.zeros(4096, np.float32)
    saver = tw.Saver({"w": w}, max_to_keep=1)
    for step in range(1, 5):
        w[:] = step
        saver.save(str(tmp_path / "model.ckpt"), global_step=step)
        assert not (tmp_path / ".tw-spare-0").exists()
    assert sorted(os.listdir(tmp_path)) == [".trainwatch.job", ".trainwatch.lock", "checkpoint", "model.ckpt-4"]


def _copy_newest(checkpoint_dir, chunk=4096):
    """What cp does: the newest listed checkpoint's bytes by plain reads, no lock; None when it is gone."""
    newest = tw.latest_checkpoint(str(checkpoint_dir))
    try:
        with open(newest, "rb") as f:
            return b"".join(iter(lambda: f.read(chunk), b""))
    except (FileNotFoundError, TypeError):
        return None


def test_an_outside_reader_copies_one_whole_checkpoint_C15(tmp_path):
    """A program copying the newest listed checkpoint in a loop without trainwatch's lock (cp, tar, rsync)
    while saves run with max_to_keep=1 gets, every time, the bytes of one checkpoint that was written
    (checked by the checksum of the whole file, recorded right after each save), as with TF or
    torch.save + os.remove. A copy that spans two more saves (half read before them) is whole too; with
    recycle_files=True that same copy mixes two checkpoints: the risk the option documents."""
    rng = np.random.default_rng(5)
    w = np.zeros(1 << 16, np.float32)
    saver = tw.Saver({"w": w}, max_to_keep=1)
    prefix = str(tmp_path / "model.ckpt")
    written, copies, stop = set(), [], threading.Event()

    def save(step):
        w[:] = rng.standard_normal(w.size).astype(np.float32)
        path = saver.save(prefix, global_step=step)
        with open(path, "rb") as f:
            written.add(hashlib.sha256(f.read()).hexdigest())

    def copy_in_a_loop():
        for _ in range(2000):  # bounded, whatever the saves do
            if stop.is_set():
                return
            copy = _copy_newest(tmp_path)
            if copy is not None:
                copies.append(hashlib.sha256(copy).hexdigest())

    save(0)
    reader = threading.Thread(target=copy_in_a_loop)
    reader.start()
    for step in range(1, 41):
        save(step)
    stop.set()
    reader.join()
    assert copies and all(copy in written for copy in copies)

    def half_then_rest(saver, first_step):
        """Reads half of the newest checkpoint, lets two saves run, reads the rest: whether it is whole."""
        newest = tw.latest_checkpoint(str(tmp_path))
        with open(newest, "rb") as f:
            reference = f.read()
        with open(newest, "rb") as f:
            head = f.read(len(reference) // 2)
            for step in (first_step, first_step + 1):
                w[:] = rng.standard_normal(w.size).astype(np.float32)
                saver.save(prefix, global_step=step)
            return head + f.read() == reference

    assert all(half_then_rest(saver, 100 + 2 * i) for i in range(3))
    del saver
    recycling = tw.Saver({"w": w}, max_to_keep=1, recycle_files=True)
    recycling.save(prefix, global_step=200)
    assert not all(half_then_rest(recycling, 300 + 2 * i) for i in range(3))


@pytest.mark.parametrize("recycle", [False, True])
def test_monitored_training_session_recycles_only_when_asked_C15(tmp_path, recycle):
    """MonitoredTrainingSession(recycle_checkpoint_files=...) reaches the session's saver: with
    max_to_keep=1 and a synchronous save every step, a spare exists after a few steps only when asked for."""
    w = np.zeros(4096, np.float32)
    hook = tw.CheckpointSaverHook(str(tmp_path), save_steps=1, async_checkpoint=False)
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w}, max_to_keep=1,
                                     save_checkpoint_secs=None, save_checkpoint_steps=None, save_summaries_steps=None,
                                     log_step_count_steps=None, hooks=[hook], recycle_checkpoint_files=recycle) as sess:
        for _ in range(4):
            sess.run(lambda ctx: np.add(w, 1, out=w))
        assert (tmp_path / ".tw-spare-0").exists() == recycle


def test_latest_checkpoint_is_none_without_a_state_file(tmp_path):
    assert tw.latest_checkpoint(str(tmp_path)) is None


def test_list_and_load_variables(tmp_path):
    variables = {"a": np.arange(6, dtype=np.float64).reshape(2, 3), "b": torch.tensor([1, 2], dtype=torch.bfloat16)}
    tw.Saver(variables).save(str(tmp_path / "m"), global_step=1)
    assert tw.list_variables(str(tmp_path)) == [("a", [2, 3]), ("b", [2])]
    np.testing.assert_array_equal(tw.load_variable(str(tmp_path), "a"), variables["a"])
    np.testing.assert_array_equal(tw.bfloat16_to_float32(tw.load_variable(str(tmp_path), "b")), [1, 2])
    with pytest.raises(tw.NotFoundError, match="Key nope not found"):
        tw.load_variable(str(tmp_path), "nope")


def test_load_variable_refuses_a_tensor_over_its_limit_before_allocating(tmp_path, monkeypatch):
    # C22: a file of a few kilobytes can declare gigabytes; load_variable allocates only up to a limit the
    # caller can raise (max_bytes=, TRAINWATCH_MAX_LOAD_BYTES; 1 GiB by default).
    w = np.arange(4096, dtype=np.float32)  # 16 KiB
    path = tw.Saver({"w": w}).save(str(tmp_path / "m"))
    message = (f"tensor 'w' of checkpoint {path} declares 16.0 KiB, over the 1.0 KiB limit of load_variable: "
               "pass max_bytes= (TRAINWATCH_MAX_LOAD_BYTES) to raise it")
    with pytest.raises(tw.ResourceExhaustedError) as refused:
        tw.load_variable(path, "w", max_bytes=1024)
    assert str(refused.value) == message
    np.testing.assert_array_equal(tw.load_variable(path, "w", max_bytes=16384), w)
    monkeypatch.setenv("TRAINWATCH_MAX_LOAD_BYTES", "1024")
    with pytest.raises(tw.ResourceExhaustedError, match="over the 1.0 KiB limit"):
        tw.load_variable(path, "w")
    np.testing.assert_array_equal(tw.load_variable(path, "w", max_bytes=1 << 20), w)
    monkeypatch.setenv("TRAINWATCH_MAX_LOAD_BYTES", "lots")
    with pytest.raises(tw.InvalidArgumentError, match="TRAINWATCH_MAX_LOAD_BYTES=lots"):
        tw.load_variable(path, "w")
    monkeypatch.delenv("TRAINWATCH_MAX_LOAD_BYTES")
    assert tw.checkpoint.DEFAULT_MAX_LOAD_BYTES == 1 << 30
    np.testing.assert_array_equal(tw.load_variable(path, "w"), w)


def test_restore_of_a_mismatched_shape_is_invalid_argument(tmp_path):
    path = tw.Saver({"w": np.zeros(3, np.float32)}).save(str(tmp_path / "m"))
    with pytest.raises(tw.InvalidArgumentError):
        tw.Saver({"w": np.zeros(4, np.float32)}).restore(path)


def test_corrupt_checkpoint_is_data_loss(tmp_path):
    path = tw.Saver({"w": np.arange(1000, dtype=np.float32)}).save(str(tmp_path / "m"))
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\xff" * 16)
    with pytest.raises(tw.DataLossError):
        tw.load_variable(path, "w")


def test_init_fn_runs_when_nothing_was_restored_S7_S13():
    calls = []
    scaffold = tw.Scaffold(init_fn=lambda scaffold, session: calls.append((scaffold, session.global_step)))
    with tw.MonitoredSession(tw.ChiefSessionCreator(scaffold)):
        pass
    assert calls == [(scaffold, 0)]


def test_init_fn_exception_surfaces_from_creation():
    def init_fn(scaffold, session):
        raise KeyError("init failed")
    with pytest.raises(KeyError, match="init failed"):
        tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(init_fn=init_fn)))


def test_checkpoint_filename_with_path_restores_that_file_S5(tmp_path):
    w = np.full(2, 5.0, np.float32)
    saver = tw.Saver({"w": w})
    with tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables={"w": w}))) as sess:
        sess.run(lambda ctx: ctx.set_global_step(9))
    path = tw.Saver({"w": w, "global_step": np.array(9, np.int64)}).save(str(tmp_path / "m"))
    del saver
    w[:] = 0
    with tw.SingularMonitoredSession(scaffold=tw.Scaffold(variables={"w": w}),
                                     checkpoint_filename_with_path=path) as sess:
        assert sess.global_step == 9
    np.testing.assert_array_equal(w, [5, 5])


def test_checkpoint_dir_and_file_together_are_an_error_S5():
    with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and checkpoint_filename_with_path."):
        tw.ChiefSessionCreator(checkpoint_dir="a", checkpoint_filename_with_path="b")


class Listener(tw.CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.log = []
        self.stop_at = stop_at

    def begin(self):
        self.log.append("begin")

    def before_save(self, session, global_step_value):
        self.log.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.log.append(("after_save", global_step_value))
        return global_step_value == self.stop_at

    def end(self, session, global_step_value):
        self.log.append(("end", global_step_value))


def run_with_saver(tmp_path, listener, steps, **hook_args):
    w = np.zeros(2, np.float32)
    hook = tw.CheckpointSaverHook(str(tmp_path), listeners=[listener], async_checkpoint=False, **hook_args)
    creator = tw.ChiefSessionCreator(tw.Scaffold(variables={"w": w}), checkpoint_dir=str(tmp_path))
    with tw.MonitoredSession(creator, hooks=[hook]) as sess:
        while not sess.should_stop() and sess.global_step < steps:
            sess.run(lambda ctx: np.add(w, 1, out=w))
        return sess


def test_listener_calls_in_tf_order_B17_B21_B23_B24(tmp_path):
    listener = Listener()
    run_with_saver(tmp_path, listener, 4, save_steps=2)
    assert listener.log == ["begin", ("before_save", 0), ("after_save", 0), ("before_save", 2), ("after_save", 2),
                            ("before_save", 4), ("after_save", 4), ("end", 4)]


def test_listener_after_save_true_stops_training_B22(tmp_path):
    listener = Listener(stop_at=2)
    sess = run_with_saver(tmp_path, listener, 100, save_steps=2)
    assert sess.should_stop()
    assert ("after_save", 2) in listener.log and ("before_save", 4) not in listener.log


def test_listener_exception_surfaces(tmp_path):
    class Bad(tw.CheckpointSaverListener):
        def before_save(self, session, global_step_value):
            raise OSError("disk on fire")
    with pytest.raises(OSError, match="disk on fire"):
        run_with_saver(tmp_path, Bad(), 2, save_steps=1)


def test_a_path_that_is_not_utf8_round_trips(tmp_path):
    """latest_checkpoint of a directory named b"ckpt\\xff" returns os.fsdecode's str; that str, its bytes
    and a pathlib.Path of it all restore, and every path argument takes str, bytes and os.PathLike."""
    import pathlib

    directory = os.fsencode(tmp_path) + b"/ckpt\xff"
    os.mkdir(directory)
    w = np.array([1, 2], np.float32)
    saver = tw.Saver({"w": w})
    saved = saver.save(directory + b"/model.ckpt", global_step=3)
    assert saved == os.fsdecode(directory + b"/model.ckpt-3")
    latest = tw.latest_checkpoint(directory)
    assert latest == saved and isinstance(latest, str)
    assert tw.latest_checkpoint(os.fsdecode(directory)) == latest
    assert tw.latest_checkpoint(pathlib.Path(os.fsdecode(directory))) == latest
    for path in (latest, os.fsencode(latest), pathlib.Path(latest)):
        w[:] = 0
        saver.restore(path)
        np.testing.assert_array_equal(w, [1, 2])
    assert saver.last_checkpoints == [latest]
    assert saver.save(pathlib.Path(os.fsdecode(directory)) / "model.ckpt", global_step=4).endswith("model.ckpt-4")
    np.testing.assert_array_equal(tw.load_variable(directory, "w"), [1, 2])
    assert [name for name, _ in tw.list_variables(pathlib.Path(latest))] == ["w"]
    with pytest.raises(TypeError, match="save_path must be a path"):
        saver.restore(3)
    del saver  # releases the directory's lock for the session
    w[:] = 0
    with tw.MonitoredTrainingSession(checkpoint_dir=directory, variables={"w": w}, save_checkpoint_steps=None,
                                     save_summaries_steps=None, log_step_count_steps=None) as sess:
        assert sess.global_step == 4
    np.testing.assert_array_equal(w, [1, 2])
