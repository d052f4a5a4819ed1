"""Training on device tensors from Python, without a GPU (V2–V8;
trainwatch/device.h): MonitoredTrainingSession with device variables and a device loss, NanTensorHook
detecting on the device (fail, stop, rollback), asynchronous checkpoints saved and restored bit for
bit, Savers and Shards of device tensors, values read by name as copies on the device, and every
failing device operation raised as an exception naming the operation and the tensor.

Each test runs on two devices (device_backends.py): the fake device, whose memory the host cannot
read (a library that touches a device pointer crashes the test) and whose copies complete late (a
library that reads a staging buffer before waiting reads poison and fails the bit-exact checks), and
TorchDevice on torch's CPU (its torch code for real)."""
import logging

import numpy as np
import pytest

import trainwatch as tw

import device_backends

torch = pytest.importorskip("torch")


@pytest.fixture(params=["fake", "torch-cpu"])
def backend(request, monkeypatch):
    monkeypatch.setattr(tw.devices, "_default_tried", True)
    made = device_backends.make(request.param)
    tw.devices.use(made.device)
    yield made
    tw.devices.use(None)


class Model:
    """w (float32) and b (float64) on the device; each step adds 1 to both and publishes the loss,
    a device scalar, NaN at step `nan_at` (the weights then ruined too when `ruin` is set)."""

    def __init__(self, backend, nan_at=None, ruin=False):
        self.backend = backend
        self.w = backend.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 7)
        self.b = backend.tensor(np.array([0.25, -1.5], np.float64))
        self.nan_at, self.ruin = nan_at, ruin
        self.loss = backend.tensor(np.float32(0))

    def variables(self):
        return {"w": self.w, "b": self.b}

    def host(self):
        return {"w": self.backend.numpy(self.w), "b": self.backend.numpy(self.b)}

    def step(self, ctx):
        w = self.backend.numpy(self.w) + 1
        self.backend.assign(self.b, self.backend.numpy(self.b) + 1)
        loss = np.float32(w.sum())
        if ctx.global_step == self.nan_at:
            self.nan_at = None
            loss = np.float32("nan")
            if self.ruin:
                w[:] = np.nan
        self.backend.assign(self.w, w)
        self.backend.assign(self.loss, loss)
        return {"loss": self.loss}


def session(model, checkpoint_dir, hooks=(), last_step=6, **kwargs):
    arguments = dict(checkpoint_dir=checkpoint_dir and str(checkpoint_dir), variables=model.variables(), save_checkpoint_steps=2,
                     save_summaries_steps=None, log_step_count_steps=None,
                     hooks=[*hooks, tw.StopAtStepHook(last_step=last_step)])
    return tw.MonitoredTrainingSession(**dict(arguments, **kwargs))


def train(model, checkpoint_dir, hooks=(), **kwargs):
    with session(model, checkpoint_dir, hooks, **kwargs) as sess:
        while not sess.should_stop():
            sess.run(model.step)


def test_training_checkpoints_device_variables_bit_exact_and_resumes_from_them(backend, tmp_path):
    model = Model(backend)
    train(model, tmp_path, hooks=[tw.NanTensorHook("loss")])
    saved = model.host()
    path = tw.latest_checkpoint(str(tmp_path))
    assert path.endswith("-6")
    for name, value in saved.items():
        loaded = tw.load_variable(path, name)
        assert loaded.dtype == value.dtype and loaded.tobytes() == value.tobytes(), name
    assert "copy_to_host" in backend.operations() and "count_nonfinite" in backend.operations()

    resumed = Model(backend)
    backend.assign(resumed.w, np.zeros((4, 3), np.float32))
    with session(resumed, tmp_path, last_step=6) as sess:  # restores step 6
        assert sess.run("global_step") == 6
    for name, value in resumed.host().items():
        assert value.tobytes() == saved[name].tobytes(), name
    assert "copy_to_device" in backend.operations()


def test_a_device_value_read_by_name_is_a_copy_on_the_device_V6(backend, tmp_path):
    model = Model(backend)
    seen = {}

    class Fetch(tw.SessionRunHook):
        def before_run(self, run_context):
            return tw.SessionRunArgs("loss")

        def after_run(self, run_context, run_values):
            seen["loss"] = run_values.results

    with session(model, tmp_path, hooks=[Fetch()], last_step=2) as sess:
        sess.run(model.step)
        w = sess.run("w")
    assert type(w) is not np.ndarray and backend.numpy(w).tobytes() == model.host()["w"].tobytes()
    assert backend.numpy(seen["loss"]) == np.float32(model.host()["w"].sum())


@pytest.mark.parametrize("action", ["fail", "stop"])
def test_a_nan_loss_on_the_device_is_found_there_V3(backend, tmp_path, action):
    model = Model(backend, nan_at=3)
    hook = tw.NanTensorHook("loss", fail_on_nan_loss=action == "fail")
    with session(model, tmp_path, hooks=[hook], last_step=10) as sess:
        if action == "fail":
            with pytest.raises(tw.NanLossDuringTrainingError):
                while not sess.should_stop():
                    sess.run(model.step)
        else:
            while not sess.should_stop():
                sess.run(model.step)
            assert sess.run("global_step") == 4  # stopped after the run of step 3
    assert "count_nonfinite" in backend.operations()


def test_a_nan_rolls_back_to_the_last_good_device_checkpoint(backend, tmp_path):
    model = Model(backend, nan_at=6, ruin=True)  # the run from step 6 ends at 7: between saves (B48)
    train(model, tmp_path, hooks=[tw.NanTensorHook("loss", action="rollback")], last_step=8)
    clean = Model(backend)
    train(clean, tmp_path / "clean", last_step=8)
    final = model.host()
    assert np.isfinite(final["w"]).all()
    # rolled back to step 6 and trained on to 8: where the model without a NaN ends
    for name, value in clean.host().items():
        assert final[name].tobytes() == value.tobytes(), name
    assert "copy_to_device" in backend.operations()


def test_a_saver_saves_and_restores_device_tensors_bit_exact(backend, tmp_path):
    w = backend.tensor(np.linspace(-3, 3, 10, dtype=np.float32))
    h = backend.tensor(np.arange(6, dtype=np.float16).reshape(2, 3))
    saver = tw.Saver({"w": w, "h": h})
    path = saver.save(str(tmp_path / "model.ckpt"), global_step=3)
    before = {"w": backend.numpy(w), "h": backend.numpy(h)}
    assert tw.load_variable(path, "w").tobytes() == before["w"].tobytes()
    backend.assign(w, np.zeros(10, np.float32))
    backend.assign(h, np.full((2, 3), 9, np.float16))
    saver.restore(path)
    assert backend.numpy(w).tobytes() == before["w"].tobytes()
    assert backend.numpy(h).tobytes() == before["h"].tobytes()


def test_a_device_shard_that_is_the_whole_tensor_saves(backend, tmp_path):
    whole = np.arange(8, dtype=np.float32).reshape(4, 2)
    shard = tw.Shard(backend.tensor(whole), (4, 2), 0)
    path = tw.Saver({"w": shard}).save(str(tmp_path / "model.ckpt"), global_step=1)
    assert tw.load_variable(path, "w").tobytes() == whole.tobytes()


def test_numerics_count_on_the_device_V2(backend):
    t = backend.tensor(np.array([1, np.nan, np.inf, -np.inf, np.nan], np.float32))
    result = tw.scan(t)
    assert (result.nan_count, result.pos_inf_count, result.neg_inf_count) == (2, 1, 1)
    with pytest.raises(tw.InvalidArgumentError, match="NaN"):
        tw.check_numerics(t, "bad values")


def test_logging_tensor_hook_logs_device_values_V4(backend, tmp_path, caplog):
    model = Model(backend)
    with caplog.at_level(logging.INFO, logger="trainwatch"):
        train(model, tmp_path, hooks=[tw.LoggingTensorHook(["loss"], every_n_iter=1)], last_step=2)
    assert f"loss = {np.float32(model.host()['w'].sum())!s}" in caplog.text


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("operation", ["copy_to_host", "alloc_pinned", "record"])
def test_a_failing_save_names_the_operation_and_tensor_and_writes_nothing_V8(backend, tmp_path, operation):
    model = Model(backend)
    backend.fail(operation, "no bytes today")
    with pytest.raises(tw.OpError, match=f"{operation}.*no bytes today") as raised:
        train(model, tmp_path)  # its first checkpoint, at creation: raised there or by the next run
    assert "'w'" in str(raised.value) or operation != "copy_to_host"
    assert not list(tmp_path.glob("model.ckpt*"))


def test_a_copy_that_fails_late_fails_the_save_V8(backend, tmp_path):
    model = Model(backend)
    backend.fail_later("copy_to_host", "the copy faulted")
    with pytest.raises(tw.OpError, match="the copy faulted"):
        train(model, tmp_path)
    assert not list(tmp_path.glob("model.ckpt*"))


def test_a_failing_restore_copy_names_it(backend, tmp_path):
    train(Model(backend), tmp_path, last_step=2)
    backend.fail("copy_to_device", "device lost")
    with pytest.raises(tw.OpError, match="copy_to_device.*device lost") as raised:
        session(Model(backend), tmp_path)
    assert "'w'" in str(raised.value) or "'b'" in str(raised.value)


def test_a_device_unregistered_after_registration_is_an_error_naming_the_tensor_V7(backend, tmp_path):
    model = Model(backend)
    with session(model, None, hooks=[tw.NanTensorHook("loss")]) as sess:
        tw.devices.use(None)
        with pytest.raises(tw.FailedPreconditionError, match="'loss'"):
            sess.run(model.step)


def test_a_saver_whose_copy_fails_names_it_and_writes_nothing(backend, tmp_path):
    w = backend.tensor(np.ones(4, np.float32))
    saver = tw.Saver({"w": w})
    backend.fail("copy_to_host", "no bytes today")
    with pytest.raises(tw.OpError, match="copy_to_host of 'w'.*no bytes today"):
        saver.save(str(tmp_path / "model.ckpt"), global_step=1)
    assert not list(tmp_path.glob("model.ckpt*"))


def test_a_failing_count_fails_the_nan_check_naming_the_loss_V8(backend, tmp_path):
    model = Model(backend)
    backend.fail("count_nonfinite", "kernel failed")
    with session(model, None, hooks=[tw.NanTensorHook("loss")]) as sess:
        with pytest.raises(tw.CallbackFailedError, match="count_nonfinite of 'loss'.*kernel failed"):
            sess.run(model.step)


def test_a_failing_count_before_a_save_names_the_variables(backend, tmp_path):
    model = Model(backend)
    backend.fail("count_nonfinite", "kernel failed")
    with pytest.raises(tw.CallbackFailedError, match="NaN before saving.*count_nonfinite of 'w', 'b'.*kernel failed"):
        session(model, tmp_path)
    assert not list(tmp_path.glob("model.ckpt*"))


def test_a_subclassed_nan_hook_sees_the_device_loss_through_a_host_copy(backend, tmp_path):
    model = Model(backend, nan_at=2)
    seen = []

    class Watching(tw.NanTensorHook):  # reading TF's private state runs the hook's TF code in Python (H33)
        def after_run(self, run_context, run_values):
            seen.append((type(run_values.results).__name__, self._loss_tensor))
            super().after_run(run_context, run_values)

    with pytest.raises(tw.NanLossDuringTrainingError):
        train(model, tmp_path, hooks=[Watching("loss")])
    assert seen and all(kind != "ndarray" and name == "loss" for kind, name in seen)  # device copies


def test_a_job_saves_and_restores_device_shards_bit_exact_D16(backend, tmp_path):
    from test_distributed_api import ThreadWorld, run_ranks
    whole = (np.arange(24, dtype=np.float32).reshape(6, 4) / 3).astype(np.float32)
    rows = {0: slice(0, 4), 1: slice(4, 6)}  # uneven boxes

    def job(make_rows, last_step):
        shards = {rank: backend.tensor(make_rows(rank)) for rank in rows}

        def body(collective):
            shard = tw.Shard(shards[collective.rank], whole.shape, rows[collective.rank].start)
            with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": shard},
                                             hooks=[tw.StopAtStepHook(last_step=last_step)], collective=collective,
                                             save_checkpoint_steps=1, save_summaries_steps=None,
                                             log_step_count_steps=None) as sess:
                while not sess.should_stop():
                    sess.run(lambda ctx: None)
                return sess.run("global_step")
        results = run_ranks(ThreadWorld(2), body)
        for result in results.values():
            if isinstance(result, BaseException):
                raise result
        return {rank: backend.numpy(shard) for rank, shard in shards.items()}

    job(lambda rank: whole[rows[rank]], last_step=2)
    path = tw.latest_checkpoint(str(tmp_path))
    assert tw.load_variable(path, "w").tobytes() == whole.tobytes()
    restored = job(lambda rank: np.zeros_like(whole[rows[rank]]), last_step=2)  # restores step 2
    for rank, value in restored.items():
        assert value.tobytes() == whole[rows[rank]].tobytes(), rank


def test_device_feeds_reach_the_step_as_the_objects_fed(backend, tmp_path):
    model = Model(backend)
    x, hooked = backend.tensor(np.ones(3, np.float32)), backend.tensor(np.zeros(2, np.float64))
    seen = {}

    def step(ctx):
        seen.update(ctx.feeds)
        return model.step(ctx)

    with session(model, None, hooks=[tw.FeedFnHook(lambda: {"h": hooked}), tw.NanTensorHook("loss")]) as sess:
        sess.run(step, feed_dict={"x": x})
    assert seen["x"] is x and seen["h"] is hooked


def test_sessions_on_two_threads_share_one_python_device(backend, tmp_path):
    import threading
    models = [Model(backend), Model(backend)]
    errors = []

    def run(i):
        try:
            train(models[i], tmp_path / str(i), hooks=[tw.NanTensorHook("loss")], last_step=8)
        except BaseException as error:  # judged below
            errors.append(error)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and not any(thread.is_alive() for thread in threads)
    for i, model in enumerate(models):
        path = tw.latest_checkpoint(str(tmp_path / str(i)))
        assert tw.load_variable(path, "w").tobytes() == model.host()["w"].tobytes()
