"""A device written in Python for tests without a GPU (trainwatch/device.h, served through
trainwatch.devices.use).

Its memory cannot be read by the host: every device address lies in a PROT_NONE mapping, so a library
that dereferences a device pointer itself crashes the test. The bytes live in Python bytearrays keyed
by address, reached only through the table's operations. Work is asynchronous as on a GPU: each
operation is queued to one worker thread (the "stream") that runs it late, after a pause; the host side
of a copy or count is poisoned when the work is queued, so a library that reads a staging buffer or a
result before waiting for the event sees garbage. Every operation can be made to fail, at the call or
later, when its event is waited for.
"""
import ctypes
import queue
import threading
import time

import numpy as np

import trainwatch as tw
from trainwatch import native

_PROT_NONE, _MAP_PRIVATE, _MAP_ANONYMOUS, _MAP_NORESERVE = 0, 0x02, 0x20, 0x4000
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

NUMPY_OF = {native.TW_FLOAT16: np.float16, native.TW_FLOAT32: np.float32, native.TW_FLOAT64: np.float64,
            native.TW_BFLOAT16: np.uint16, native.TW_INT32: np.int32, native.TW_INT64: np.int64,
            native.TW_UINT8: np.uint8, native.TW_BOOL: np.bool_, native.TW_FLOAT8_E4M3FN: np.uint8,
            native.TW_FLOAT8_E5M2: np.uint8}
POISON = 0xA5


class Device:
    """The fake device: a PROT_NONE address range, bytes in Python, one late worker thread."""

    def __init__(self, size=64 << 20, device_type=tw.devices.CUDA, delay_secs=0.002):
        self.device_type = device_type
        self.name = "pyfake"
        self.delay_secs = delay_secs
        self.base = _libc.mmap(None, size, _PROT_NONE, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE, -1, 0)
        assert self.base not in (None, ctypes.c_void_p(-1).value), "mmap failed"
        self.size = size
        self.next = self.base
        self.memory = {}      # device address → bytearray
        self.pinned = {}      # host address → ctypes buffer
        self.fail = {}        # operation → message: raise at the call
        self.fail_later = {}  # operation → message: the next wait (or query) of an event after it fails
        self.calls = []       # (operation, names) of every call
        self.lock = threading.Lock()
        self.queue = queue.Queue()
        self.pending_failure = None
        self.worker = threading.Thread(target=self._work, daemon=True)
        self.worker.start()

    # --- device memory, for the tests (the host's side of the program) ---------------------------
    def alloc(self, size):
        with self.lock:
            address = self.next
            self.next += max(64, (size + 63) // 64 * 64)
            assert self.next <= self.base + self.size
            self.memory[address] = bytearray(size)
        return address

    def find(self, address, size):
        """The bytearray holding [address, address + size) and the offset in it."""
        with self.lock:
            for start, data in self.memory.items():
                if start <= address and address + size <= start + len(data):
                    return data, address - start
        raise ValueError(f"{address:#x} ({size} bytes) is not device memory of this device")

    def read(self, address, size):
        data, offset = self.find(address, size)
        return bytes(data[offset:offset + size])

    def write(self, address, payload):
        data, offset = self.find(address, len(payload))
        data[offset:offset + len(payload)] = payload

    def tensor(self, value, dtype=None):
        """A FakeTensor holding a copy of ``value`` (a numpy array)."""
        array = np.array(value, dtype=dtype, order="C")  # 0-d stays 0-d (ascontiguousarray makes it 1-d)
        tensor = FakeTensor(self, self.alloc(array.nbytes), array.dtype, array.shape)
        tensor.assign(array)
        return tensor

    # --- the table --------------------------------------------------------------------------------
    def _call(self, operation, names):
        self.calls.append((operation, tuple(names)))
        if operation in self.fail:
            raise RuntimeError(self.fail[operation])
        if operation in self.fail_later:
            message = self.fail_later[operation]
            self.queue.put(lambda: setattr(self, "pending_failure", f"{operation}: {message}"))

    def _work(self):
        while True:
            job = self.queue.get()
            time.sleep(self.delay_secs)
            job()

    def copy_to_host(self, device_id, copies):
        self._call("copy_to_host", [c[3] for c in copies])
        for dst, src, size, _ in copies:
            ctypes.memset(dst, POISON, size)  # what a reader that does not wait sees
            self.queue.put(lambda dst=dst, src=src, size=size: ctypes.memmove(dst, self.read(src, size), size))

    def copy_to_device(self, device_id, copies):
        self._call("copy_to_device", [c[3] for c in copies])
        for dst, src, size, _ in copies:
            self.find(dst, size)
            self.queue.put(lambda dst=dst, src=src, size=size: self.write(dst, ctypes.string_at(src, size)))

    def count_nonfinite(self, device_id, tensors, results):
        self._call("count_nonfinite", [t[3] for t in tensors])
        ctypes.memset(results, 0, 40 * len(tensors))
        for i, (address, dtype, shape, _) in enumerate(tensors):
            count = int(np.prod(shape, dtype=np.int64))
            size = count * native.dtype_size(dtype)

            def scan(i=i, address=address, dtype=dtype, size=size):
                row = scan_row(self.read(address, size), dtype)
                ctypes.memmove(results + 40 * i, np.asarray(row, np.int64).tobytes(), 40)
            self.find(address, size) if size else None
            self.queue.put(scan)

    def record(self, device_id):
        self._call("record", [])
        event = threading.Event()
        self.queue.put(event.set)
        return event

    def wait(self, event):
        self._call("wait", [])
        event.wait()
        self._raise_pending()

    def query(self, event):
        self._call("query", [])
        done = event.is_set()
        if done:
            self._raise_pending()
        return done

    def _raise_pending(self):
        failure, self.pending_failure = self.pending_failure, None
        if failure is not None:
            raise RuntimeError(failure)

    def release(self, event):
        self.calls.append(("release", ()))

    def alloc_pinned(self, size):
        self._call("alloc_pinned", [])
        buffer = ctypes.create_string_buffer(size + 64)
        address = (ctypes.addressof(buffer) + 63) & ~63
        with self.lock:
            self.pinned[address] = buffer
        return address

    def free_pinned(self, address):
        self.calls.append(("free_pinned", ()))
        with self.lock:
            del self.pinned[address]

    def copy_tensor(self, device_id, address, dtype, shape):
        data = np.frombuffer(self.read(address, int(np.prod(shape, dtype=np.int64)) * native.dtype_size(dtype)),
                             NUMPY_OF[dtype]).reshape(shape)
        return self.tensor(data)

    def operations(self):
        return [operation for operation, _ in self.calls]


def scan_row(raw, dtype):
    """[nan, +inf, -inf, first non-finite, first NaN] of a tensor's bytes (the reference of the tests)."""
    if dtype == native.TW_BFLOAT16:
        values = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    elif dtype in (native.TW_FLOAT16, native.TW_FLOAT32, native.TW_FLOAT64):
        values = np.frombuffer(raw, NUMPY_OF[dtype])
    else:
        return [0, 0, 0, -1, -1]
    nan, bad = np.isnan(values), ~np.isfinite(values)
    first = lambda mask: int(np.argmax(mask)) if mask.any() else -1  # noqa: E731
    return [int(nan.sum()), int(np.isposinf(values).sum()), int(np.isneginf(values).sum()), first(bad), first(nan)]


class FakeTensor:
    """A tensor in the fake device's memory, seen by trainwatch through __cuda_array_interface__."""

    def __init__(self, device, address, dtype, shape, strides=None, readonly=False, device_id=0):
        self.fake, self.address, self.dtype, self.shape = device, address, np.dtype(dtype), tuple(shape)
        self.strides, self.readonly = strides, readonly
        self.device = type("Ordinal", (), {"index": device_id})()

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.address, self.readonly),
                "strides": self.strides, "version": 2}

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def numpy(self):
        """A host copy (the test's own read, not the library's)."""
        return np.frombuffer(self.fake.read(self.address, self.nbytes), self.dtype).reshape(self.shape).copy()

    def assign(self, value):
        self.fake.write(self.address, np.ascontiguousarray(np.asarray(value, self.dtype)).tobytes())

    def __repr__(self):
        return f"FakeTensor({self.dtype}, {self.shape}, {self.address:#x})"
