"""A device table made in C registered from Python (trainwatch.devices.CudaPlugin →
native.set_device_table), without CUDA: a stand-in for libtrainwatch_cuda whose
tw_cuda_device_create fills a real tw_device of ctypes callbacks that forward to the Python fake
device. A session then trains, checks its loss and checkpoints through that C table; a table the
library refuses has its destroy called and raises; a create that fails names the library's message."""
import ctypes

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import native
from trainwatch.devices import _TwDevice

import fake_device

STATUS = ctypes.c_int


class Copy(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("src", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("name", ctypes.c_char_p)]


class Tensor(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("data", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


COPY = ctypes.CFUNCTYPE(STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Copy), ctypes.c_size_t)
COUNT = ctypes.CFUNCTYPE(STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Tensor), ctypes.c_size_t,
                         ctypes.c_void_p)
RECORD = ctypes.CFUNCTYPE(STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
WAIT = ctypes.CFUNCTYPE(STATUS, ctypes.c_void_p, ctypes.c_void_p)
QUERY = ctypes.CFUNCTYPE(STATUS, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))
RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
ALLOC = ctypes.CFUNCTYPE(STATUS, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
CREATE = ctypes.CFUNCTYPE(STATUS, ctypes.POINTER(_TwDevice), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)

def _loaded_libtrainwatch():
    """The libtrainwatch the extension loaded (privately): its tw_set_error, as a plugin calls it."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        path = next(line.split()[-1] for line in maps if "/libtrainwatch.so" in line)
    library = ctypes.CDLL(path)
    library.tw_set_error.restype = STATUS
    library.tw_set_error.argtypes = [STATUS, ctypes.c_char_p]
    return library


_libtrainwatch = _loaded_libtrainwatch()


class CLibrary:
    """What ctypes.CDLL("libtrainwatch_cuda.so") gives, with a table forwarding to `device`."""

    def __init__(self, device, device_type=tw.devices.CUDA, create_fails=False):
        self.device, self.device_type, self.create_fails = device, device_type, create_fails
        self.events, self.destroyed, self.user_data = {}, [], []
        self.slots = self._slots()  # the callbacks must outlive the registration
        self.tw_cuda_device_create = CREATE(self._create)
        self.tw_last_error_message = _libtrainwatch.tw_last_error_message  # the real plugin's, through its link

    def _guard(self, operation, body):
        try:
            body()
            return native.TW_OK
        except Exception as error:  # noqa: BLE001 — a C slot reports, never raises
            return _libtrainwatch.tw_set_error(native.TW_INTERNAL, f"{operation}: {error}".encode())

    def _slots(self):
        d = self.device

        def copies(array, count):
            return [(array[i].dst, array[i].src, array[i].size, (array[i].name or b"").decode()) for i in range(count)]

        def tensors(array, count):
            return [(array[i].data, array[i].dtype, tuple(array[i].shape[k] for k in range(array[i].ndim)),
                     array[i].name.decode()) for i in range(count)]

        def record(_, device_id, out):
            def body():
                event = d.record(device_id)
                self.events[id(event)] = event
                out[0] = id(event)
            return self._guard("record", body)

        def query(_, event, out):
            def body():
                out[0] = int(d.query(self.events[event]))
            return self._guard("query", body)

        def alloc(_, size, out):
            def body():
                out[0] = d.alloc_pinned(size)
            return self._guard("alloc_pinned", body)

        return dict(
            copy_to_host=COPY(lambda _, i, a, n: self._guard("copy_to_host", lambda: d.copy_to_host(i, copies(a, n)))),
            copy_to_device=COPY(lambda _, i, a, n: self._guard("copy_to_device",
                                                               lambda: d.copy_to_device(i, copies(a, n)))),
            count_nonfinite=COUNT(lambda _, i, a, n, r: self._guard("count_nonfinite",
                                                                    lambda: d.count_nonfinite(i, tensors(a, n), r))),
            record=RECORD(record),
            wait=WAIT(lambda _, e: self._guard("wait", lambda: d.wait(self.events[e]))),
            query=QUERY(query),
            release=RELEASE(lambda _, e: self.events.pop(e, None) and None),
            alloc_pinned=ALLOC(alloc),
            free_pinned=FREE(lambda _, p: d.free_pinned(p)),
            destroy=DESTROY(lambda user_data: self.destroyed.append(user_data)))

    def _create(self, table, user_data, stream):
        if self.create_fails:
            user_data[0] = None
            return _libtrainwatch.tw_set_error(native.TW_FAILED_PRECONDITION, b"no CUDA device (stand-in)")
        t = table.contents
        t.struct_size, t.device_type, t.name = ctypes.sizeof(_TwDevice), self.device_type, b"c-standin"
        for slot, function in self.slots.items():
            setattr(t, slot, ctypes.cast(function, ctypes.c_void_p))
        self.user_data.append(1000 + len(self.user_data))
        user_data[0] = self.user_data[-1]
        return native.TW_OK


@pytest.fixture(autouse=True)
def no_default_device(monkeypatch):
    monkeypatch.setattr(tw.devices, "_default_tried", True)
    tw.devices.use(None)
    yield
    tw.devices.use(None)


def test_a_c_table_registered_through_the_plugin_path_serves_a_session(tmp_path):
    device = fake_device.Device()
    library = CLibrary(device)
    plugin = tw.devices.CudaPlugin(library, "stand-in")
    tw.devices.use(plugin)
    assert tw.devices.current() is plugin
    w = device.tensor(np.arange(6, dtype=np.float32))
    loss = device.tensor(np.float32(0))

    def step(ctx):
        w.assign(w.numpy() * 2)
        loss.assign(np.float32("nan") if ctx.global_step == 3 else w.numpy().sum())
        return {"loss": loss}

    with pytest.raises(tw.NanLossDuringTrainingError):
        with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables={"w": w}, save_checkpoint_steps=1,
                                         save_summaries_steps=None, log_step_count_steps=None,
                                         hooks=[tw.NanTensorHook("loss")]) as sess:
            for _ in range(4):
                sess.run(step)  # the fourth run's loss is NaN
    latest = tw.latest_checkpoint(str(tmp_path))
    assert tw.load_variable(latest, "w").tolist() == (np.arange(6) * 2 ** int(latest.rsplit("-", 1)[1])).tolist()
    assert {"copy_to_host", "count_nonfinite", "wait"} <= set(device.operations())
    tw.devices.use(None)  # the library lets go of the table: its destroy runs with the plugin's user_data
    assert library.destroyed == library.user_data[:1]


def test_a_c_table_the_library_refuses_is_destroyed():
    library = CLibrary(fake_device.Device(), device_type=native.TW_DEVICE_CPU)
    with pytest.raises(tw.InvalidArgumentError, match="device_type"):
        tw.devices.use(tw.devices.CudaPlugin(library, "stand-in"))
    assert library.destroyed == library.user_data and tw.devices.current() is None


def test_a_plugin_that_finds_no_device_says_why():
    library = CLibrary(fake_device.Device(), create_fails=True)
    with pytest.raises(tw.FailedPreconditionError, match=r"libtrainwatch_cuda \(stand-in\) could not create its "
                                                         r"device: no CUDA device \(stand-in\)"):
        tw.devices.use(tw.devices.CudaPlugin(library, "stand-in"))
    assert tw.devices.current() is None
