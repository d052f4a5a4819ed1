"""Zero copy: what the library reads and writes is the caller's own numpy / torch memory."""
import numpy as np
import pytest
import torch

import trainwatch as tw
from conftest import Recorder


def session_with(variables, checkpoint_dir=None, hooks=None):
    creator = tw.ChiefSessionCreator(tw.Scaffold(variables=variables), checkpoint_dir=checkpoint_dir)
    return tw.MonitoredSession(creator, hooks=hooks)


def save_then_clobber_then_restore(tmp_path, variables, clobber):
    saver = tw.Saver(variables)
    path = saver.save(str(tmp_path / "model.ckpt"), global_step=1)
    clobber()
    saver.restore(path)


def test_restore_writes_into_the_registered_numpy_array(tmp_path):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    address = w.__array_interface__["data"][0]
    save_then_clobber_then_restore(tmp_path, {"w": w}, lambda: w.fill(-1))
    np.testing.assert_array_equal(w, np.arange(12).reshape(3, 4))
    assert w.__array_interface__["data"][0] == address


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64])
def test_restore_writes_into_the_registered_torch_tensor(tmp_path, dtype):
    t = torch.arange(8).to(dtype)
    expected = t.clone()
    pointer = t.data_ptr()
    save_then_clobber_then_restore(tmp_path, {"t": t}, lambda: t.fill_(0))
    assert torch.equal(t, expected) and t.data_ptr() == pointer


def test_torch_bool_tensors_are_bool_variables_in_place(tmp_path):
    """torch 1.13 exports no bool over DLPack (a causal mask buffer is a common bool in a state dict):
    the tensor's own bytes are registered, as bool, and restored in place."""
    mask = torch.tril(torch.ones(5, 7, dtype=torch.bool))
    expected, pointer = mask.clone(), mask.data_ptr()
    save_then_clobber_then_restore(tmp_path, {"mask": mask}, lambda: mask.fill_(False))
    assert torch.equal(mask, expected) and mask.data_ptr() == pointer and mask.dtype == torch.bool
    loaded = tw.load_variable(str(tmp_path / "model.ckpt-1"), "mask")
    assert loaded.dtype == np.bool_
    np.testing.assert_array_equal(loaded, expected.numpy())


def test_restore_writes_into_parameters_that_require_grad(tmp_path):
    layer = torch.nn.Linear(3, 2)
    before = layer.weight.detach().clone()
    save_then_clobber_then_restore(tmp_path, {"weight": layer.weight},
                                   lambda: torch.nn.init.zeros_(layer.weight))
    assert torch.equal(layer.weight.detach(), before)


def test_session_restore_writes_into_variables_on_creation(tmp_path):
    w = np.ones(4, np.float32)
    with session_with({"w": w}, str(tmp_path), hooks=[tw.CheckpointSaverHook(str(tmp_path), save_steps=1)]) as sess:
        sess.run(lambda ctx: np.add(w, 1, out=w))
    w[:] = 0
    with session_with({"w": w}, str(tmp_path)) as sess:
        assert sess.global_step == 1
    np.testing.assert_array_equal(w, [2, 2, 2, 2])


def test_published_outputs_are_read_in_place_by_hooks():
    big = np.zeros(1 << 20, np.float32)

    class Peek(tw.SessionRunHook):
        def before_run(self, run_context):
            return tw.SessionRunArgs("big")

        def after_run(self, run_context, run_values):
            self.value = run_values.results
    hook = Peek()

    def step(ctx):
        big[123] = 42.0  # written after publishing would be seen too: no copy is taken at publish time
        return {"big": big}
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(step)
    assert hook.value[123] == 42.0


def test_strided_and_torch_outputs_are_accepted():
    base = np.arange(20, dtype=np.float64).reshape(4, 5)
    hook = Recorder(fetches=["strided", "torch"])
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(lambda ctx: {"strided": base[:, ::2], "torch": torch.tensor([1.5, 2.5])})
    np.testing.assert_array_equal(hook.results[0][0], base[:, ::2])
    np.testing.assert_array_equal(hook.results[0][1], [1.5, 2.5])


def test_bfloat16_results_come_back_as_bits_the_user_converts():
    t = torch.tensor([1.0, -2.5, 3.0e10], dtype=torch.bfloat16)
    hook = Recorder(fetches="bf")
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(lambda ctx: {"bf": t})
    bits = hook.results[0]
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(tw.bfloat16_to_float32(bits), t.float().numpy())
    assert torch.equal(torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16), t)


def test_scan_reads_torch_bfloat16_in_place():
    t = torch.zeros(1000, dtype=torch.bfloat16)
    t[10] = float("nan")
    t[20] = float("inf")
    result = tw.scan(t)
    assert (result.nan_count, result.pos_inf_count, result.first_nonfinite_index) == (1, 1, 10)


def test_raw_session_variables_are_the_registered_objects():
    w = torch.zeros(3)
    seen = {}
    with session_with({"w": w}) as sess:
        sess.run(lambda ctx: seen.update(ctx.session.variables))
    assert seen["w"] is w
