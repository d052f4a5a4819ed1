"""A checkpoint directory that cannot be lost or abused, as a user meets it (S5, C7,
C9, C12): crafted state-file paths never make retention delete outside the directory; a damaged
state file never costs a checkpoint; FIFOs are refused at once (each check runs in a subprocess with a
timeout, so a regression fails instead of hanging); a second process saving into a live directory gets
a clear error at session creation; a standalone Saver's checkpoint restores with the step of its name."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trainwatch as tw

from training_runs import train


def run_python(code, timeout=60):
    """Runs `code` in a fresh interpreter with this test's trainwatch; a hang fails the test."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_crafted_state_file_never_deletes_outside_the_directory_C9(tmp_path):
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    victim, abs_victim = tmp_path / "victim", elsewhere / "victim"
    victim.write_text("precious")
    abs_victim.write_text("precious")
    w = np.zeros(2, np.float32)
    train(run, w, 2, max_to_keep=1)
    (run / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "../victim"\n'
        f'all_model_checkpoint_paths: "{abs_victim}"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n')
    # Opening the directory as chief trims the list to max_to_keep=1; training on evicts more.
    train(run, w, 6, max_to_keep=1)
    assert victim.read_text() == "precious"
    assert abs_victim.read_text() == "precious"
    assert sorted(p.name for p in run.glob("model.ckpt-*")) == ["model.ckpt-6"]  # its own still go


def test_flipped_byte_in_the_state_file_resumes_from_the_newest_step_S5(tmp_path):
    w = np.zeros(2, np.float32)
    train(tmp_path, w, 4)
    before = {p.name: p.stat().st_ino for p in tmp_path.glob("model.ckpt-*")}
    state = bytearray((tmp_path / "checkpoint").read_bytes())
    state[2] ^= 0x40
    (tmp_path / "checkpoint").write_bytes(bytes(state))
    w[:] = -100
    assert train(tmp_path, w, 6) == 4  # not 0: the chief found model.ckpt-4 by name
    np.testing.assert_array_equal(w, [6, 6])
    for name in ("model.ckpt-0", "model.ckpt-2"):  # older checkpoints were not overwritten
        assert (tmp_path / name).stat().st_ino == before[name]
    assert tw.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-6")  # state file rewritten


def test_a_model_grown_since_its_checkpoints_is_refused_and_they_are_kept(tmp_path):
    """A variable the listed checkpoints lack is TF's NotFoundError at creation (D16): starting
    afresh at step 0 would let max_to_keep delete the checkpoints of the model as it was."""
    w = np.zeros(2, np.float32)
    train(tmp_path, w, 4, max_to_keep=2)
    kept = sorted(p.name for p in tmp_path.glob("model.ckpt-*"))
    grown = {"w": w, "z": np.ones(3, np.float32)}
    with pytest.raises(tw.errors.NotFoundError, match="Key z not found in checkpoint .*model.ckpt-4"):
        tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables=grown, save_checkpoint_steps=2,
                                    max_to_keep=2)
    assert sorted(p.name for p in tmp_path.glob("model.ckpt-*")) == kept
    np.testing.assert_array_equal(grown["z"], [1, 1, 1])


def test_standalone_saver_checkpoint_restores_with_the_step_of_its_name(tmp_path):
    w = np.array([3, 4], np.float32)
    tw.Saver({"w": w}).save(str(tmp_path / "model.ckpt"), global_step=7)  # no global_step inside
    w[:] = 0
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w},
                                     save_checkpoint_steps=None) as sess:
        assert sess.global_step == 7
    np.testing.assert_array_equal(w, [3, 4])


def checkpoint_bytes(directory):
    """Every checkpoint file and the state file of `directory`, with their bytes."""
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.name.startswith(("model.ckpt", "checkpoint"))}


def test_a_restore_out_of_address_space_fails_creation_and_writes_nothing_C20(tmp_path):
    """`ulimit -v` too small to map the newest checkpoint: before, every checkpoint counted as damaged,
    the job started at step 0 and its saves overwrote model.ckpt-2, -4. Now creation raises
    ResourceExhaustedError naming the checkpoint, and every file is byte-identical."""
    w = np.random.default_rng(0).integers(0, 255, 48 << 20, dtype=np.uint8)  # stored raw: a 48 MiB file
    train(tmp_path, w, 4)
    before = checkpoint_bytes(tmp_path)
    result = run_python(f"""
        import resource, numpy as np, trainwatch as tw
        w = np.zeros({w.size}, np.uint8)
        with open("/proc/self/statm") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + {w.nbytes // 2}, used + {w.nbytes // 2}))
        try:
            tw.MonitoredTrainingSession(checkpoint_dir={str(tmp_path)!r}, variables={{"w": w}},
                                        save_checkpoint_steps=2, save_summaries_steps=None,
                                        log_step_count_steps=None)
        except tw.errors.ResourceExhaustedError as e:
            print("raised:", e)
        else:
            print("created")
        """, timeout=120)
    assert "raised:" in result.stdout, (result.stdout, result.stderr)
    assert "model.ckpt-4" in result.stdout and "not a sign of damage" in result.stdout, result.stdout
    assert checkpoint_bytes(tmp_path) == before
    w[:] = 0
    assert train(tmp_path, w, 5) == 4  # without the limit, the job resumes


def test_every_checkpoint_damaged_raises_data_loss_and_keeps_them_C20(tmp_path):
    """TF's restore of a corrupt checkpoint raises DataLossError; trainwatch falls back to an older
    intact one, and when none is left it raises too instead of starting over on top of them."""
    w = np.zeros(2, np.float32)
    train(tmp_path, w, 4)
    for p in tmp_path.glob("model.ckpt-*"):
        data = bytearray(p.read_bytes())
        data[len(data) // 2] ^= 0x55
        p.write_bytes(bytes(data))
    before = checkpoint_bytes(tmp_path)
    with pytest.raises(tw.errors.DataLossError, match="move them out of"):
        train(tmp_path, w, 6)
    assert checkpoint_bytes(tmp_path) == before


def test_fifos_are_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "checkpoint")
    os.mkfifo(tmp_path / "pipe")
    result = run_python(f"""
        import numpy as np, trainwatch as tw
        d = {str(tmp_path)!r}
        assert tw.latest_checkpoint(d) is None
        with tw.MonitoredTrainingSession(checkpoint_dir=d, variables={{"w": np.zeros(1)}},
                                         save_checkpoint_steps=None) as sess:
            assert sess.global_step == 0
        for call in (lambda: tw.load_variable(d + "/pipe", "w"), lambda: list(tw.summary_iterator(d + "/pipe"))):
            try:
                call()
            except tw.InvalidArgumentError as e:
                assert "is a FIFO (named pipe), not a regular file" in str(e), e
            else:
                raise AssertionError("a FIFO was accepted")
        print("refused")
    """)
    assert result.returncode == 0, result.stderr
    assert "refused" in result.stdout
    assert "is a FIFO (named pipe), not a regular file" in result.stderr  # the state file's warning


def test_second_process_saving_into_a_live_directory_fails_at_creation(tmp_path):
    w = np.zeros(1, np.float32)
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w}) as sess:
        sess.run(lambda ctx: None)
        result = run_python(f"""
            import numpy as np, trainwatch as tw
            try:
                tw.MonitoredTrainingSession(checkpoint_dir={str(tmp_path)!r},
                                            variables={{"w": np.zeros(1, np.float32)}})
            except tw.FailedPreconditionError as e:
                print(e)
            else:
                raise AssertionError("a second writer was let in")
        """)
        assert result.returncode == 0, result.stderr
        assert f"checkpoint directory {tmp_path} is in use: a session with a CheckpointSaverHook of another process (pid {os.getpid()})" in result.stdout
        # A second session in this process is refused the same way.
        with pytest.raises(tw.FailedPreconditionError, match="is in use"):
            tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w})
    # Closed: the directory is free again.
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w}) as sess:
        assert sess.global_step == 1
