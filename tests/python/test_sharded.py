"""Sharded checkpoints from Python (D16, D17): tw.Shard variables in one process (registration, zero copy,
bad input) and in jobs of Gloo ranks (sharded_ranks.py): 4 ranks save their rows of numpy float32,
float64, float16 and torch bfloat16 and float32 tensors, and the whole tensors read back —
tw.load_variable, tw.list_variables and trainwatch-ckpt export-safetensors — equal the global tensors
bit for bit (T2: CheckpointSaverHook saves at creation, every N steps and at the end, B21–B23). Then
jobs of 2, 1 and 4 ranks restore checkpoints written by 4, 2, 1 ranks and by one plain Saver into their
own slicing, bit-exact, and a corrupted part makes every rank fall back to the previous checkpoint
together (D16)."""
import json
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import distributed

from distributed_world import run_gloo
from sharded_ranks import (BIAS, FAILING_TIMEOUT_SECS, SOURCES, SPECS, TRAIN_STEPS, as_library_tensor, bits_of, box_of,
                           global_tensors, grid_box, rows_of, to_bits, zeroed)

torch = pytest.importorskip("torch")
torch_distributed = pytest.importorskip("torch.distributed")

SCRIPT = pathlib.Path(__file__).with_name("sharded_ranks.py")


def trained(steps):
    """The global tensors after `steps` of w += 1 in each tensor's own dtype (what every rank did to its rows)."""
    expected = {}
    for name, bits in global_tensors().items():
        value = as_library_tensor(name, bits)
        for _ in range(steps):
            value += 1
        expected[name] = to_bits(value)
    return expected


def assert_bit_exact(actual, expected, what):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    assert actual.tobytes() == expected.tobytes(), what


# ---------------------------------------------------------------------------------------------- one process


def test_shard_offset_int_means_rows_and_tuple_is_kept():
    rows = np.zeros((2, 4), np.float32)
    assert tw.Shard(rows, (8, 4), 2).offset == (2, 0)
    assert tw.Shard(rows, [8, 4], (2, 0)).global_shape == (8, 4)
    assert tw.Shard(rows, (8, 4), np.int64(6)).offset == (6, 0)
    # checked when registered (in a job, where every rank hears of it: D1), by a Saver or a session
    with pytest.raises(TypeError, match="global_shape"):
        tw.Saver({"w": tw.Shard(rows, 8, 0)})
    with pytest.raises(TypeError, match="offset"):
        tw.Saver({"w": tw.Shard(rows, (8, 4), (2.5, 0))})
    with pytest.raises(ValueError, match="global_shape must hold int64"):  # not SWIG's conversion error
        tw.MonitoredTrainingSession(variables={"w": tw.Shard(rows, (2**70, 4), 0)}, save_summaries_steps=None,
                                    log_step_count_steps=None)
    with pytest.raises(ValueError, match="offset must hold int64"):
        tw.Saver({"w": tw.Shard(rows, (8, 4), 2**63)})


@pytest.mark.parametrize("make", [lambda: np.arange(8, dtype=np.float16).reshape(2, 4),
                                  lambda: torch.arange(8, dtype=torch.float32).reshape(2, 4).to(torch.bfloat16)])
def test_a_shard_is_registered_zero_copy(make):
    rows = make()
    with tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables={"w": tw.Shard(rows, (8, 4), 4)}))) as sess:
        assert sess.raw_session().variables["w"] is rows  # the very array, as plain variables
        rows[1, 2] = 42
        assert to_bits(sess.run("w")[1, 2]) == to_bits(rows[1, 2])  # the library reads the registered memory


@pytest.mark.parametrize("make", [lambda: torch.zeros(0, 4), lambda: torch.zeros(0, 4, dtype=torch.bfloat16)])
def test_a_rank_may_hold_no_rows_of_a_shard(make):
    # torch exports a tensor without elements with zero strides (DLPack): it is still row-major
    rows = make()
    with tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables={"w": tw.Shard(rows, (8, 4), 8),
                                                                           "empty": make()}))) as sess:
        assert sess.raw_session().variables["w"] is rows
        assert tuple(sess.run("empty").shape) == (0, 4)


@pytest.mark.parametrize("shard, message", [
    (lambda: tw.Shard(np.zeros((2, 4), np.float32), (8, 4), 7), "shard 'w' dimension 0"),
    (lambda: tw.Shard(np.zeros((2, 4), np.float32), (8, 3), 0), "shard 'w' dimension 1"),
    (lambda: tw.Shard(np.zeros((2, 4), np.float32), (8, 4), -1), "shard 'w' dimension 0"),
    (lambda: tw.Shard(np.zeros((2, 4), np.float32), (8, 4), (0, 0, 0)), "shard 'w' has 2 dimensions"),
    (lambda: tw.Shard(np.zeros((4, 4), np.float32)[:, :2], (8, 2), 0), "'w' is not contiguous"),
    (lambda: tw.Shard(torch.zeros(4, 2).t(), (4, 4), 0), "'w' is not contiguous"),
])
def test_bad_shards_raise_the_library_status(shard, message):
    with pytest.raises(tw.InvalidArgumentError, match=message):
        tw.MonitoredTrainingSession(variables={"w": shard()}, save_summaries_steps=None, log_step_count_steps=None)


@pytest.mark.parametrize("job", [{}, dict(is_chief=False)])
def test_a_saver_without_collective_refuses_to_save_shards(tmp_path, job):
    saver = tw.Saver({"w": tw.Shard(np.zeros((2, 4), np.float32), (8, 4), 2)}, **job)
    with pytest.raises(tw.InvalidArgumentError, match="'w' holds only a box .* collective"):
        saver.save(str(tmp_path / "model.ckpt"), global_step=1)
    assert not list(tmp_path.iterdir())


def test_a_saver_without_collective_saves_a_shard_that_is_its_whole_tensor(tmp_path):
    whole = np.arange(32, dtype=np.float32).reshape(8, 4)
    path = tw.Saver({"w": tw.Shard(whole, (8, 4), 0)}).save(str(tmp_path / "model.ckpt"), global_step=1)
    assert np.array_equal(tw.load_variable(path, "w"), whole)


class SecondRank(distributed.Collective):
    """Rank 1 of a job of 2, for a saver that makes no collective call but its creation's (D1: one
    allreduce in which no rank reports a failure)."""

    rank, world_size = 1, 2

    def allreduce_int64(self, values, op, timeout):
        assert list(values) == [0], "a saver without Shards makes no collective call but its creation's"

    def broadcast(self, data, root, timeout):
        raise AssertionError("a saver without Shards makes no collective call but its creation's")

    barrier = broadcast


@pytest.mark.parametrize("job", [dict(collective=SecondRank()), dict(is_chief=False)])
def test_without_shards_only_the_chief_saves(tmp_path, job):
    # every rank calling save: the others' would only fight the chief over the directory's lock
    saver = tw.Saver({"b": BIAS.copy()}, **job)
    assert saver.save(str(tmp_path / "model.ckpt"), global_step=1) is None
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------------------------------- 4 Gloo ranks


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    if not torch_distributed.is_available():
        pytest.skip("torch has no distributed support")
    workdir = tmp_path_factory.mktemp("sharded")
    return workdir, run_gloo(["session_save", "saver_save", "grid_save"], workdir, script=SCRIPT)


def test_every_rank_saved_without_error(saved):
    for scenario, reports in saved[1].items():
        assert sorted(reports) == [0, 1, 2, 3], scenario
        for report in reports.values():
            assert report["error"] is None, report["traceback"]


def test_session_checkpoints_hold_the_global_tensors_bit_exact_T2(saved):
    ckpt = saved[0] / "session_save" / "ckpt"
    for step in (0, 2, TRAIN_STEPS):  # creation, every 2 steps, end
        path = str(ckpt / f"model.ckpt-{step}")
        for name, expected in trained(step).items():
            assert_bit_exact(tw.load_variable(path, name), expected, f"{name} at step {step}")
        assert_bit_exact(tw.load_variable(path, "bias"), BIAS, "bias")
        assert int(tw.load_variable(path, "global_step")) == step
    assert saved[1]["session_save"][0]["checkpoint"] == str(ckpt / f"model.ckpt-{TRAIN_STEPS}")
    assert sorted(p.name for p in ckpt.glob(f"model.ckpt-{TRAIN_STEPS}.part-*")) == [
        f"model.ckpt-{TRAIN_STEPS}.part-{i:05d}-of-00004" for i in range(4)]


def test_saver_checkpoint_lists_global_shapes_and_loads_whole_tensors(saved):
    path = saved[0] / "saver_save" / "model.ckpt-7"
    assert all(report["path"] == str(path) for report in saved[1]["saver_save"].values())
    listed = dict(tw.list_variables(str(path)))
    assert listed == {**{name: list(shape) for name, (shape, _, _) in SPECS.items()}, "bias": [3]}
    for name, expected in global_tensors().items():
        assert_bit_exact(tw.load_variable(str(path), name), expected, name)


def test_a_checkpoint_of_nd_boxes_loads_and_exports_whole_tensors(saved, tmp_path):
    path = saved[0] / "grid_save" / "model.ckpt-9"
    assert all(report["path"] == str(path) for report in saved[1]["grid_save"].values())
    out = tmp_path / "grid.safetensors"
    exported = subprocess.run([cli(), "export-safetensors", str(path), str(out)], capture_output=True, text=True,
                              timeout=60)
    assert exported.returncode == 0, exported.stderr
    tensors = read_safetensors(out)
    for name, expected in global_tensors().items():
        assert_bit_exact(tw.load_variable(str(path), name), expected, name)
        assert_bit_exact(tensors[name], expected, name)


def cli():
    """trainwatch-ckpt of the build the package comes from, else the one on PATH."""
    built = pathlib.Path(tw.__file__).resolve().parents[3] / "tools" / "cli" / "trainwatch-ckpt"
    found = str(built) if built.is_file() else shutil.which("trainwatch-ckpt")
    if found is None:
        pytest.skip("trainwatch-ckpt is not built")
    return found


def read_safetensors(path):
    """name → numpy array of a safetensors file (its documented layout: u64 header size, JSON, data)."""
    data = pathlib.Path(path).read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    kinds = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": np.uint16, "I64": np.int64}
    body = data[8 + size:]
    return {name: np.frombuffer(body[begin:end], kinds[entry["dtype"]]).reshape(entry["shape"])
            for name, entry in header.items() for begin, end in [entry["data_offsets"]]}


def test_cli_verifies_lists_and_exports_whole_tensors(saved, tmp_path):
    path = str(saved[0] / "session_save" / "ckpt" / f"model.ckpt-{TRAIN_STEPS}")
    verified = subprocess.run([cli(), "verify", path], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stderr
    listed = subprocess.run([cli(), "list", path], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split("\t")[0]: line.split("\t")[1:3] for line in listed.stdout.splitlines()}
    for name, (shape, dtype, _) in SPECS.items():
        assert rows[name] == [dtype, "[" + ",".join(map(str, shape)) + "]"], listed.stdout
    out = tmp_path / "model.safetensors"
    exported = subprocess.run([cli(), "export-safetensors", path, str(out)], capture_output=True, text=True,
                              timeout=60)
    assert exported.returncode == 0, exported.stderr
    tensors = read_safetensors(out)
    assert sorted(tensors) == sorted([*SPECS, "bias", "global_step"])
    for name, expected in trained(TRAIN_STEPS).items():
        assert_bit_exact(tensors[name], expected, name)
    assert_bit_exact(tensors["bias"], BIAS, "bias")


def test_a_changed_or_truncated_part_is_refused_by_verify_and_load(saved, tmp_path):
    source = saved[0] / "saver_save"
    for change in ("flip", "truncate"):
        copy = tmp_path / change
        shutil.copytree(source, copy)
        part = copy / "model.ckpt-7.part-00002-of-00004"
        data = bytearray(part.read_bytes())
        if change == "flip":
            data[len(data) // 2] ^= 0x40
        else:
            del data[-1]
        part.write_bytes(bytes(data))
        path = str(copy / "model.ckpt-7")
        verified = subprocess.run([cli(), "verify", path], capture_output=True, text=True, timeout=60)
        assert verified.returncode != 0 and "part-00002-of-00004" in verified.stderr, (change, verified.stderr)
        if change == "truncate":  # every read of the part is pinned by its size in the index
            with pytest.raises(tw.DataLossError, match="part-00002-of-00004"):
                tw.load_variable(path, "w32")


# ---------------------------------------------------------------------------------------------- resharding


def corrupt(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def resharded(saved):
    """Jobs of 2, 1 and 4 ranks restoring every checkpoint of sharded_ranks.SOURCES written before them
    (the 2- and 1-rank jobs then save their own slicing), and the 4-rank one also restoring a directory
    whose newest checkpoint has a corrupted part."""
    root = saved[0]
    plain = root / "plain"
    plain.mkdir()
    whole = {name: as_library_tensor(name, bits) for name, bits in global_tensors().items()}
    tw.Saver({**whole, "bias": BIAS.copy()}).save(str(plain / "model.ckpt"), global_step=0)
    shutil.copytree(root / "session_save" / "ckpt", root / "fallback")
    corrupt(root / "fallback" / f"model.ckpt-{TRAIN_STEPS}.part-00002-of-00004")
    return {world: run_gloo(scenarios, root, world_size=world, script=SCRIPT)
            for world, scenarios in ((2, ["restore", "save"]), (1, ["restore", "save"]), (4, ["restore", "fallback"]))}


def assert_rows(restored, rank, world, expected, what):
    begin, end = rows_of(rank, world)
    for name, bits in expected.items():
        actual = bytes.fromhex(restored[name])
        assert actual == np.ascontiguousarray(bits[begin:end]).tobytes(), f"{what}: {name} on rank {rank} of {world}"
    assert bytes.fromhex(restored["bias"]) == BIAS.tobytes(), f"{what}: bias on rank {rank} of {world}"


@pytest.mark.parametrize("written, world", [("4", 2), ("4", 1), ("2", 4), ("1", 4), ("4", 4), ("2", 1),
                                            ("plain", 2), ("plain", 4), ("grid", 2), ("grid", 1), ("grid", 4)])
def test_restore_into_another_number_of_ranks_is_bit_exact(resharded, written, world):
    expected = global_tensors()
    reports = resharded[world]["restore"]
    assert sorted(reports) == list(range(world))
    for rank, report in reports.items():
        assert report["error"] is None, report["traceback"]
        assert written in report["restored"], f"{written} not restored by {world} ranks"
        assert_rows(report["restored"][written], rank, world, expected, f"{written} → {world}")


def test_the_smaller_jobs_saved_their_own_slicing(resharded):
    for world in (2, 1):
        for report in resharded[world]["save"].values():
            assert report["error"] is None, report["traceback"]
        path = resharded[world]["save"][0]["path"]
        assert path.endswith(SOURCES[str(world)])
        for name, bits in global_tensors().items():
            assert_bit_exact(tw.load_variable(path, name), bits, f"{name} written by {world}")


def test_a_corrupted_part_makes_every_rank_fall_back_together_D16(resharded):
    reports = resharded[4]["fallback"]
    expected = trained(2)  # the checkpoint before the corrupted model.ckpt-3
    for rank, report in reports.items():
        assert report["error"] is None, report["traceback"]
        assert report["global_step"] == 2, f"rank {rank} restored step {report['global_step']}"
        assert_rows(report["restored"], rank, 4, expected, "fallback")


@pytest.mark.parametrize("source", ["saver_save/model.ckpt-7", "grid_save/model.ckpt-9", "plain/model.ckpt-0"])
def test_nd_boxes_restore_from_any_slicing(saved, resharded, source):
    # rank 3's box of the 2×2 grid (rows and columns cut), from slices of rows, from the grid, from one file
    expected = global_tensors()
    variables = {}
    for name, bits in expected.items():
        offset, extent = grid_box(3, bits.shape)
        variables[name] = tw.Shard(as_library_tensor(name, np.zeros_like(box_of(bits, offset, extent))), bits.shape,
                                   offset)
    tw.Saver(variables).restore(str(saved[0] / source))  # Shards without a job: each its own box
    for name, bits in expected.items():
        assert_bit_exact(to_bits(variables[name].tensor), np.ascontiguousarray(box_of(bits, *grid_box(3, bits.shape))),
                         name)


@pytest.mark.parametrize("source", ["saver_save/model.ckpt-7", "plain/model.ckpt-0"])
def test_a_saver_without_collective_restores_each_shard_rows(saved, resharded, source):
    variables = zeroed(1, 2)
    tw.Saver(variables).restore(str(saved[0] / source))
    assert_rows(bits_of(variables), 1, 2, global_tensors(), source)


def test_a_shard_that_does_not_fit_is_refused_naming_it_and_left_untouched(saved):
    path = str(saved[0] / "saver_save" / "model.ckpt-7")
    variables = zeroed(0, 2)
    variables["w32"] = tw.Shard(np.zeros((4, 3), np.float32), (16, 3), 0)  # another global shape
    before = bits_of(variables)
    with pytest.raises(tw.InvalidArgumentError, match=r"'w32' is a shard of float32\[16,3\]"):
        tw.Saver(variables).restore(path)
    assert bits_of(variables) == before  # all or nothing


def test_a_collective_that_raises_in_a_sharded_save_fails_every_rank_in_that_save_D9(tmp_path):
    """Rank 1's collective raises inside a sharded save. It must make no further call (no end-of-run vote
    that would meet rank 0 still inside the save's allreduce — Gloo aborts a process on such a mismatch);
    run_gloo checks every rank exited with 0, not by a signal. Both fail naming the save, within one
    timeout of the run (two would mean a rank waited again in a vote)."""
    reports = run_gloo(["save_collective_raises"], tmp_path, world_size=2, script=SCRIPT)["save_collective_raises"]
    # The raising rank gets its own exception back unchanged; the library's log names the save it ended.
    assert reports[1]["error"] == "ValueError", reports[1]
    assert "injected failure of the collective inside a save" in reports[1]["message"]
    assert reports[0]["error"] in ("UnavailableError", "DeadlineExceededError"), reports[0]
    for rank, report in reports.items():
        failed = [line for line in report["logged"] if line.startswith("Run failed")]
        assert len(failed) == 1, (rank, report["logged"])
        for text in failed + ([report["message"]] if rank == 0 else []):
            assert "voting on the parts of checkpoint" in text, (rank, text)
            assert "at the end of run" not in text, (rank, text)
        assert report["ended"] - report["running"] < 1.8 * FAILING_TIMEOUT_SECS, (rank, report["message"])
