"""Python on a real GPU (tools/gpu-check runs this file; the CPU suite never collects it): CUDA torch
tensors as trainwatch variables and outputs — model.named_parameters() zero copy, the loss checked
for NaN on the device, asynchronous checkpoints saved and restored bit for bit, a NaN rolled back,
values read by name as CUDA tensors — with libtrainwatch_cuda's table and with TorchDevice. Without a
GPU every test fails: a skip here would read as a pass."""
import numpy as np
import pytest
import torch

import trainwatch as tw

assert torch.cuda.is_available(), "tests/gpu needs a CUDA GPU (tools/gpu-check runs them on one)"


def test_the_default_device_registered_itself_at_import():
    # torch was imported first; the plugin when tools/gpu-check points at it, else torch's
    current = tw.devices.current()
    expected = tw.devices.CudaPlugin if tw.devices.load_cuda_plugin() is not None else tw.devices.TorchDevice
    assert isinstance(current, expected)


@pytest.fixture(params=["plugin", "torch"])
def device(request):
    before = tw.devices.current()
    if request.param == "plugin":
        plugin = tw.devices.load_cuda_plugin()
        assert plugin is not None, "libtrainwatch_cuda not found (TRAINWATCH_CUDA_LIBRARY)"
        tw.devices.use(plugin)
    else:
        tw.devices.use(tw.devices.TorchDevice())
    yield request.param
    tw.devices.use(before)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.dense = torch.nn.Linear(16, 4)
        self.scale = torch.nn.Parameter(torch.ones(4, dtype=torch.bfloat16))


def trainer(net, nan_at=None):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(32, 16, device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    state = {"nan_at": nan_at}

    def step(ctx):
        optimizer.zero_grad()
        loss = (net.dense(x) * net.scale.float()).pow(2).mean()
        loss.backward()
        optimizer.step()
        if ctx.global_step == state["nan_at"]:
            state["nan_at"] = None
            with torch.no_grad():
                net.dense.weight.fill_(float("nan"))
            loss = loss * float("nan")
        return {"loss": loss.detach()}
    return step


def train(net, checkpoint_dir, hooks=(), last_step=6, step=None):
    step = step or trainer(net)
    with tw.MonitoredTrainingSession(checkpoint_dir=str(checkpoint_dir), variables=dict(net.named_parameters()),
                                     hooks=[*hooks, tw.StopAtStepHook(last_step=last_step)], save_checkpoint_steps=2,
                                     save_summaries_steps=None, log_step_count_steps=None) as sess:
        while not sess.should_stop():
            sess.run(step)
        return sess


def bits(tensor):
    return tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()


def test_named_parameters_train_checkpoint_and_resume_bit_exact(device, tmp_path):
    net = Net().cuda()
    train(net, tmp_path, hooks=[tw.NanTensorHook("loss")])
    path = tw.latest_checkpoint(str(tmp_path))
    for name, parameter in net.named_parameters():
        loaded = tw.load_variable(path, name)
        assert loaded.tobytes() == bits(parameter), name
    fresh = Net().cuda()
    with torch.no_grad():
        for parameter in fresh.parameters():
            parameter.zero_()
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables=dict(fresh.named_parameters()),
                                     save_summaries_steps=None, log_step_count_steps=None) as sess:
        assert sess.run("global_step") == 6  # restored, not run
    for (name, a), (_, b) in zip(net.named_parameters(), fresh.named_parameters()):
        assert bits(a) == bits(b), name


def test_a_nan_is_found_on_the_device_and_rolled_back(device, tmp_path):
    net = Net().cuda()
    train(net, tmp_path, hooks=[tw.NanTensorHook("loss", action="rollback")], last_step=8,
          step=trainer(net, nan_at=6))
    clean = Net().cuda()
    train(clean, tmp_path / "clean", last_step=8)
    for (name, a), (_, b) in zip(net.named_parameters(), clean.named_parameters()):
        assert torch.isfinite(a.float()).all() and bits(a) == bits(b), name


def test_a_nan_loss_fails_the_run(device, tmp_path):
    net = Net().cuda()
    with pytest.raises(tw.NanLossDuringTrainingError):
        train(net, tmp_path, hooks=[tw.NanTensorHook("loss")], step=trainer(net, nan_at=3))


def test_values_read_by_name_are_cuda_copies(device, tmp_path):
    net = Net().cuda()
    with tw.MonitoredTrainingSession(variables=dict(net.named_parameters()), save_summaries_steps=None,
                                     log_step_count_steps=None) as sess:
        sess.run(trainer(net))
        weight = sess.run("dense.weight")
    assert weight.is_cuda and weight.data_ptr() != net.dense.weight.data_ptr()
    assert bits(weight) == bits(net.dense.weight)


def test_scan_and_saver_and_shard_of_cuda_tensors(device, tmp_path):
    t = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")], device="cuda", dtype=torch.bfloat16)
    result = tw.scan(t)
    assert (result.nan_count, result.pos_inf_count, result.neg_inf_count) == (1, 1, 1)
    w = torch.arange(8, dtype=torch.float32, device="cuda").reshape(4, 2)
    saver = tw.Saver({"w": tw.Shard(w, (4, 2), 0)})
    path = saver.save(str(tmp_path / "model.ckpt"), global_step=1)
    assert np.array_equal(tw.load_variable(path, "w"), w.cpu().numpy())
    w.zero_()
    saver.restore(path)
    assert w.cpu().tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_non_contiguous_cuda_tensors_are_refused_by_name(device):
    with pytest.raises(ValueError, match="variable 'w' is a non-contiguous tensor on cuda:0"):
        tw.Saver({"w": torch.zeros(4, 4, device="cuda").t()})
