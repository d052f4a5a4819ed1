"""Device tensors from Python (V1, V5, V7; trainwatch/device.h): objects with
__cuda_array_interface__ and CUDA torch tensors become zero-copy device views, a device tensor with no
device registered is a clear error naming it and what to install, device views must be contiguous,
and trainwatch.devices' TorchDevice computes what the table promises (counts, first bad indices,
copies through pinned memory) — here on torch's CPU, so that its torch code runs in CI. The session,
hooks and checkpoints on device tensors: test_devices_session.py."""
import ctypes

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import native

import fake_device
from device_backends import HostTorchAsCuda

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def no_default_device(monkeypatch):
    """No registration but the test's own: the default (torch with CUDA, the plugin) stays out."""
    monkeypatch.setattr(tw.devices, "_default_tried", True)
    tw.devices.use(None)
    yield
    tw.devices.use(None)


@pytest.fixture(scope="module")
def fake():
    return fake_device.Device()


def view_of(value, kind="value", writable=False):
    held = tw.tensors.borrow(value, kind, "t", writable)
    return held, held.tensors()[0]


# ------------------------------------------------------------------------------------ views and errors


def test_a_device_tensor_without_a_device_names_it_and_what_to_install_V7(fake, tmp_path):
    w = fake.tensor(np.zeros((2, 3), np.float32))
    expected = "variable 'w' is on cuda:0 but no device is registered: install torch with CUDA or libtrainwatch_cuda"
    with pytest.raises(tw.FailedPreconditionError, match=expected):
        tw.Saver({"w": w})
    with pytest.raises(tw.FailedPreconditionError, match=expected):
        tw.MonitoredTrainingSession(variables={"w": w}, checkpoint_dir=str(tmp_path), save_summaries_steps=None,
                                    log_step_count_steps=None)
    with pytest.raises(tw.FailedPreconditionError, match="feed 'x' is on cuda:0 but no device is registered"):
        tw.tensors.borrow(w, "feed", "x")


def test_the_first_device_tensor_registers_the_default_device_once(fake, monkeypatch):
    calls = []
    monkeypatch.setattr(tw.devices, "_default_tried", False)
    monkeypatch.setattr(tw.devices, "load_cuda_plugin", lambda: calls.append("plugin"))
    with pytest.raises(tw.FailedPreconditionError, match="no device is registered"):
        view_of(fake.tensor(np.zeros(2, np.float32)))
    with pytest.raises(tw.FailedPreconditionError, match="no device is registered"):
        view_of(fake.tensor(np.zeros(2, np.float32)))
    assert calls == ["plugin"]  # tried once; torch here has no CUDA, so nothing was registered
    assert tw.devices.current() is None or torch.cuda.is_available()


def test_device_views_are_zero_copy_with_type_and_ordinal_V5(fake):
    tw.devices.use(fake)
    assert tw.devices.current() is fake
    t = fake.tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    held, view = view_of(t)
    assert view.on_device() and view.device_type() == native.TW_DEVICE_CUDA and view.device_id() == 0
    assert view.address() == t.address and view.dtype() == native.TW_FLOAT64 and tuple(view.shape()) == (2, 3)
    on_second = fake_device.FakeTensor(fake, t.address, np.float64, (2, 3), device_id=1)
    assert view_of(on_second)[1].device_id() == 1
    cupy_like = fake_device.FakeTensor(fake, t.address, np.float64, (2, 3))
    cupy_like.device = type("CupyDevice", (), {"id": 3})()
    assert view_of(cupy_like)[1].device_id() == 3


def test_host_tensors_stay_host_views(fake):
    tw.devices.use(fake)
    for value in (np.zeros(3, np.float32), torch.zeros(3), torch.zeros(3, dtype=torch.bfloat16), 1.5):
        assert not view_of(value)[1].on_device()


@pytest.mark.parametrize("typestr, dtype", [("<f2", native.TW_FLOAT16), ("<f4", native.TW_FLOAT32),
                                            ("<f8", native.TW_FLOAT64), ("|i1", native.TW_INT8),
                                            ("<i8", native.TW_INT64), ("|u1", native.TW_UINT8),
                                            ("|b1", native.TW_BOOL), ("<u4", native.TW_UINT32)])
def test_array_interface_typestrs(fake, typestr, dtype):
    tw.devices.use(fake)
    t = fake_device.FakeTensor(fake, fake.alloc(64), np.dtype(typestr), (4,))
    assert view_of(t)[1].dtype() == dtype


def test_bad_device_tensors_are_refused_naming_them_V1(fake):
    tw.devices.use(fake)
    base = fake.alloc(64)
    strided = fake_device.FakeTensor(fake, base, np.float32, (2, 2), strides=(4, 8))
    with pytest.raises(ValueError, match="variable 't' is a non-contiguous tensor on cuda:0.*contiguous"):
        view_of(strided, "variable", writable=True)
    row_major = fake_device.FakeTensor(fake, base, np.float32, (2, 2), strides=(8, 4))
    assert view_of(row_major)[1].strides() == ()
    readonly = fake_device.FakeTensor(fake, base, np.float32, (2,), readonly=True)
    with pytest.raises(ValueError, match="variable 't' is read-only"):
        view_of(readonly, "variable", writable=True)
    assert view_of(readonly, "feed")[1].on_device()  # what the library only reads may be read-only
    big_endian = fake_device.FakeTensor(fake, base, np.dtype(">f4"), (2,))
    with pytest.raises(TypeError, match="value 't' has an element type trainwatch does not know .*'>f4'"):
        view_of(big_endian)
    negative = fake_device.FakeTensor(fake, base, np.float32, (2,), device_id=-1)
    with pytest.raises(ValueError, match="negative device ordinal"):
        view_of(negative)

    class Masked:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (base, False), "version": 2,
                                    "mask": object()}
    with pytest.raises(ValueError, match="has a mask"):
        view_of(Masked())

    class Broken:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "version": 2}
    with pytest.raises(ValueError, match="lacks data"):
        view_of(Broken())


def test_numpy_never_views_device_memory(fake):
    tw.devices.use(fake)
    held, view = view_of(fake.tensor(np.zeros(2, np.float32)))
    with pytest.raises(ValueError, match="'t' is on cuda:0: it has no host memory for numpy to view"):
        native.as_numpy(view, None)
    with pytest.raises(ValueError, match="no host memory"):
        native.to_numpy(view)


def test_a_device_value_reads_back_as_a_copy_on_the_device(fake):
    tw.devices.use(fake)
    t = fake.tensor(np.arange(4, dtype=np.float32))
    held, view = view_of(t)
    copy = tw.tensors.to_value(view)
    assert isinstance(copy, fake_device.FakeTensor) and copy.address != t.address
    assert copy.numpy().tolist() == [0, 1, 2, 3]


# ----------------------------------------------------------------------------------------- registration


def test_use_and_current(fake):
    tw.devices.use(fake)
    assert tw.devices.current() is fake and tw.devices.current(native.TW_DEVICE_EXT) is None
    tw.devices.use(None)
    assert tw.devices.current() is None
    with pytest.raises(tw.FailedPreconditionError, match="no device is registered"):
        view_of(fake.tensor(np.zeros(1, np.float32)))


def test_the_library_refuses_a_device_of_host_memory():
    host = tw.devices.TorchDevice("cpu", device_type=native.TW_DEVICE_CPU)
    with pytest.raises(tw.InvalidArgumentError, match="device_type"):
        tw.devices.use(host)
    assert tw.devices.current(native.TW_DEVICE_CPU) is None


def test_a_plugin_that_does_not_load_raises(tmp_path):
    with pytest.raises(OSError):
        tw.devices.load_cuda_plugin(str(tmp_path / "libtrainwatch_cuda.so"))


# ---------------------------------------------------------------------- TorchDevice, on torch's CPU


@pytest.fixture
def torch_cpu():
    return tw.devices.TorchDevice("cpu")


def pinned(device, size):
    address = device.alloc_pinned(size)
    assert address % 64 == 0
    return address


def scan_rows(device, tensors):
    results = pinned(device, 40 * len(tensors))
    device.count_nonfinite(0, [(t.data_ptr(), dtype, tuple(t.shape), f"t{i}") for i, (t, dtype) in
                               enumerate(tensors)], results)
    device.wait(device.record(0))
    rows = np.frombuffer(ctypes.string_at(results, 40 * len(tensors)), np.int64).reshape(-1, 5).tolist()
    device.free_pinned(results)
    return rows


def test_torch_device_counts_every_float_dtype_like_the_reference(torch_cpu):
    values = np.array([1, np.nan, np.inf, 2, -np.inf, np.nan, 3], np.float64)
    cases = [(torch.tensor(values, dtype=torch.float16), native.TW_FLOAT16),
             (torch.tensor(values, dtype=torch.bfloat16), native.TW_BFLOAT16),
             (torch.tensor(values, dtype=torch.float32), native.TW_FLOAT32),
             (torch.tensor(values, dtype=torch.float64), native.TW_FLOAT64),
             (torch.tensor([1.0, 2.0]), native.TW_FLOAT32),
             (torch.zeros(0), native.TW_FLOAT32),
             (torch.tensor([7, -1], dtype=torch.int64), native.TW_INT64),
             (torch.tensor([[np.inf, 0.0], [0.0, np.nan]], dtype=torch.float32), native.TW_FLOAT32)]
    rows = scan_rows(torch_cpu, cases)
    for (t, dtype), row in zip(cases, rows):
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        assert row == fake_device.scan_row(raw, dtype), (t, row)
    assert rows[0] == [2, 1, 1, 1, 1] and rows[4] == [0, 0, 0, -1, -1] and rows[7] == [1, 1, 0, 0, 3]


def test_torch_device_classifies_float8_by_its_bits(torch_cpu):
    e4m3fn = torch.tensor([0x00, 0x7F, 0x7E, 0xFF, 0x38], dtype=torch.uint8)  # 0x7F/0xFF NaN; no Inf
    e5m2 = torch.tensor([0x3C, 0x7C, 0xFC, 0x7D, 0xFF, 0x7B], dtype=torch.uint8)  # +Inf, -Inf, NaN, NaN
    rows = scan_rows(torch_cpu, [(e4m3fn, native.TW_FLOAT8_E4M3FN), (e5m2, native.TW_FLOAT8_E5M2)])
    assert rows == [[2, 0, 0, 1, 1], [2, 1, 1, 1, 3]]


def test_torch_device_copies_through_its_pinned_memory(torch_cpu):
    source = torch.arange(10, dtype=torch.float32)
    target = torch.zeros(10)
    staging = pinned(torch_cpu, 40)
    torch_cpu.copy_to_host(0, [(staging, source.data_ptr(), 40, "w")])
    torch_cpu.wait(torch_cpu.record(0))
    assert np.frombuffer(ctypes.string_at(staging, 40), np.float32).tolist() == list(range(10))
    torch_cpu.copy_to_device(0, [(target.data_ptr() + 8, staging + 8, 32, "w")])
    assert torch_cpu.query(torch_cpu.record(0))
    assert target.tolist() == [0, 0] + list(range(2, 10))
    with pytest.raises(ValueError, match="not memory this device's alloc_pinned returned"):
        torch_cpu.copy_to_host(0, [(source.data_ptr(), target.data_ptr(), 4, "w")])
    with pytest.raises(ValueError, match="not memory"):
        torch_cpu.copy_to_host(0, [(staging + 8, source.data_ptr(), 40, "w")])  # past its end
    torch_cpu.free_pinned(staging)
    with pytest.raises(ValueError, match="not memory"):
        torch_cpu.copy_to_host(0, [(staging, source.data_ptr(), 4, "w")])


def test_torch_device_copies_a_tensor_on_its_device(torch_cpu):
    source = torch.tensor([[1.5, -2.0]], dtype=torch.bfloat16)
    copy = torch_cpu.copy_tensor(0, source.data_ptr(), native.TW_BFLOAT16, (1, 2))
    assert copy.dtype == torch.bfloat16 and copy.tolist() == [[1.5, -2.0]]
    assert copy.data_ptr() != source.data_ptr()


def test_a_cpu_torch_tensor_posing_as_cuda_is_a_device_view():
    device = tw.devices.TorchDevice("cpu")
    tw.devices.use(device)
    t = HostTorchAsCuda(torch.ones(3))
    held, view = view_of(t)
    assert view.on_device() and view.address() == t.tensor.data_ptr()
    copy = tw.tensors.to_value(view)
    assert isinstance(copy, torch.Tensor) and copy.tolist() == [1, 1, 1]


def test_an_explicit_plugin_path_that_is_missing_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_CUDA_LIBRARY", str(tmp_path / "missing.so"))
    with pytest.raises(OSError):
        tw.devices.load_cuda_plugin()
