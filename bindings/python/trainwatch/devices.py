"""Tensors in accelerator memory: the device that copies and checks them for the library.

A CUDA torch tensor (or any object with ``__cuda_array_interface__``: cupy, numba) is accepted wherever a
host array is — ``variables=dict(model.named_parameters())``, published outputs, feeds, ``tw.Shard`` —
zero copy: the library keeps the device pointer and never reads it itself. Everything it does with
device memory (NaN/Inf counts, the host copies hooks log, checkpoint staging, restores) goes through
the device registered for that memory's type:

- ``CudaPlugin`` — libtrainwatch_cuda's kernels (one launch checks a whole model), loaded with
  ``load_cuda_plugin()``;
- ``TorchDevice`` — the same built on torch itself: torch streams and events, pinned torch tensors,
  torch reductions;
- any object with the methods of ``TorchDevice`` (``use`` says which), e.g. a test's fake device.

A default registers itself when ``trainwatch`` is imported after torch with CUDA available, or at the
first device tensor otherwise: the plugin when it loads, else ``TorchDevice``. ``use`` replaces it and
``current`` tells which is in use. Values read back by name (``session.run("loss")``, a hook's
``run_values.results``) of a device tensor come back as a copy on the same device (a torch tensor, or
what the registered device's ``copy_tensor`` makes); LoggingTensorHook, SummarySaverHook and the others
read host copies the library makes through the device.

A device tensor must be contiguous. The device's work is ordered on the stream it serves (torch's
current stream): a tensor produced on another stream must be synchronised with it first.
"""
import atexit
import bisect
import contextlib
import ctypes
import ctypes.util
import math
import os
import sys
import threading

from . import native
from .errors import FailedPreconditionError

CUDA = native.TW_DEVICE_CUDA

_FLOAT_DTYPES = {native.TW_FLOAT16: "float16", native.TW_BFLOAT16: "bfloat16", native.TW_FLOAT32: "float32",
                 native.TW_FLOAT64: "float64"}
_FLOAT8_DTYPES = {native.TW_FLOAT8_E4M3FN: "float8_e4m3fn", native.TW_FLOAT8_E5M2: "float8_e5m2"}
_INTEGER_DTYPES = {native.TW_BOOL: "bool", native.TW_INT8: "int8", native.TW_INT16: "int16",
                   native.TW_INT32: "int32", native.TW_INT64: "int64", native.TW_UINT8: "uint8"}
_SCAN_FIELDS = 5  # tw_device_scan: nan, +inf, -inf, first non-finite, first NaN (int64 each)

_lock = threading.Lock()
_current = {}          # device type → the device registered through this module
_default_tried = False


class _DeviceBytes:
    """``size`` bytes of CUDA memory at ``address`` as torch.as_tensor takes them (no stream to wait for:
    the library's calls are ordered on the current stream already)."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, address, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False),
                                         "strides": None, "version": 2}


class _DoneEvent:
    """The event of a host 'device': torch's CPU work is complete when the call returns."""

    __slots__ = ()


def _torch_dtype(torch, dtype):
    """The torch dtype of a library dtype; float8 as its bits (uint8) where torch has no float8; None for
    the unsigned widths torch lacks (uint16, uint32, uint64)."""
    name = _FLOAT_DTYPES.get(dtype) or _INTEGER_DTYPES.get(dtype)
    if name is None and dtype in _FLOAT8_DTYPES:
        name = _FLOAT8_DTYPES[dtype] if hasattr(torch, _FLOAT8_DTYPES[dtype]) else "uint8"
    return getattr(torch, name) if name is not None else None


class TorchDevice:
    """A device built on torch: copies are ``copy_(non_blocking=True)`` between device tensors and pinned
    torch tensors, counts are torch reductions (one small result per tensor, then one copy of them all
    into the library's buffer), events are ``torch.cuda.Event`` on the current stream.

    Built with ``torch_device="cpu"`` it serves host memory posing as a device (its "device pointers" are
    host addresses): what lets this logic run without a GPU, in tests."""

    def __init__(self, torch_device="cuda", device_type=CUDA, name="torch"):
        """Creates the device; register it with ``use``.

        Args:
          torch_device: "cuda" (device pointers are CUDA memory) or "cpu" (they are host memory).
          device_type: the views it serves (a DLPack device code; CUDA by default).
          name: its name in the library's messages.
        """
        import torch
        self._torch = torch
        self._cuda = torch.device(torch_device).type == "cuda"
        self.device_type = device_type
        self.name = name
        self._lock = threading.Lock()
        self._pinned = {}     # aligned address → (torch tensor owning it, size)
        self._starts = []     # the aligned addresses, sorted
        self._views = {}      # (address, size, device id) → a uint8 torch view of device memory
        self._no_scan = {}    # device id → the result of a tensor with nothing to count

    # --- memory as torch tensors -----------------------------------------------------------------
    def _device_bytes(self, address, size, device_id):
        key = (address, size, device_id)
        view = self._views.get(key)
        if view is None:
            torch = self._torch
            if self._cuda:
                view = torch.as_tensor(_DeviceBytes(address, size), device=torch.device("cuda", device_id))
            else:
                view = torch.frombuffer((ctypes.c_uint8 * size).from_address(address), dtype=torch.uint8)
            with self._lock:
                if len(self._views) >= 65536:
                    self._views.clear()
                self._views[key] = view
        return view

    def _host_bytes(self, address, size):
        """A view of pinned memory this device allocated (the library's host side of every copy)."""
        with self._lock:
            i = bisect.bisect_right(self._starts, address) - 1
            if i >= 0:
                start = self._starts[i]
                tensor, length = self._pinned[start]
                if address + size <= start + length:
                    return tensor[address - start:address - start + size]
        raise ValueError(f"host address {address:#x} ({size} bytes) is not memory this device's alloc_pinned "
                         f"returned")

    def _typed(self, address, dtype, shape, device_id):
        torch = self._torch
        torch_dtype = _torch_dtype(torch, dtype)
        if torch_dtype is None:
            raise TypeError(f"torch has no dtype for {native.dtype_name(dtype)}")
        count = math.prod(shape)
        size = count * native.dtype_size(dtype)
        if count == 0:
            return torch.empty(tuple(shape), dtype=torch_dtype, device=self._torch_device(device_id))
        return self._device_bytes(address, size, device_id).view(torch_dtype).view(tuple(shape))

    def _torch_device(self, device_id):
        return self._torch.device("cuda", device_id) if self._cuda else self._torch.device("cpu")

    def _on(self, device_id):
        return self._torch.cuda.device(device_id) if self._cuda else contextlib.nullcontext()

    # --- the table ---------------------------------------------------------------------------------
    def copy_to_host(self, device_id, copies):
        """Enqueues copies of device memory into pinned memory: ``copies`` is [(dst, src, size, name)]."""
        with self._on(device_id):
            for dst, src, size, _ in copies:
                if size:
                    self._host_bytes(dst, size).copy_(self._device_bytes(src, size, device_id), non_blocking=True)

    def copy_to_device(self, device_id, copies):
        """Enqueues copies of pinned memory into device memory: ``copies`` is [(dst, src, size, name)]."""
        with self._on(device_id):
            for dst, src, size, _ in copies:
                if size:
                    self._device_bytes(dst, size, device_id).copy_(self._host_bytes(src, size), non_blocking=True)

    def count_nonfinite(self, device_id, tensors, results):
        """Enqueues the count of NaN, +Inf and -Inf values and the first bad indices of each tensor
        (``tensors`` is [(address, dtype, shape, name)]) into the tw_device_scan records at ``results``."""
        if not tensors:
            return
        torch = self._torch
        with self._on(device_id):
            rows = torch.stack([self._scan(address, dtype, shape, device_id) for address, dtype, shape, _ in tensors])
            out = self._host_bytes(results, rows.numel() * 8).view(torch.int64).view(rows.shape)
            out.copy_(rows, non_blocking=True)

    def _scan(self, address, dtype, shape, device_id):
        """[nan, +inf, -inf, first non-finite, first NaN] of one tensor, on the device."""
        torch = self._torch
        count = math.prod(shape)
        if count == 0 or (dtype not in _FLOAT_DTYPES and dtype not in _FLOAT8_DTYPES):
            nothing = self._no_scan.get(device_id)
            if nothing is None:
                nothing = torch.tensor([0, 0, 0, -1, -1], dtype=torch.int64, device=self._torch_device(device_id))
                self._no_scan[device_id] = nothing
            return nothing
        if dtype in _FLOAT8_DTYPES:  # classified by their bits: torch's float8 has few kernels
            bits = self._device_bytes(address, count, device_id)
            if dtype == native.TW_FLOAT8_E4M3FN:  # no infinities; NaN is S.1111.111
                nan = (bits & 0x7F) == 0x7F
                bad, pos_inf = nan, torch.zeros_like(nan)
            else:  # e5m2: exponent 11111 is Inf (mantissa 0) or NaN
                top = (bits & 0x7C) == 0x7C
                nan = top & ((bits & 0x03) != 0)
                bad = top
                pos_inf = top & ((bits & 0x83) == 0)
        else:
            x = self._typed(address, dtype, (count,), device_id)
            nan = torch.isnan(x)
            bad = ~torch.isfinite(x)
            pos_inf = x == float("inf")
        nans, bads, pos_infs = nan.sum(), bad.sum(), pos_inf.sum()
        return torch.stack([nans, pos_infs, bads - nans - pos_infs, _first(bad, bads), _first(nan, nans)])

    def record(self, device_id):
        """An event after the work enqueued so far on ``device_id``'s current stream."""
        if not self._cuda:
            return _DoneEvent()
        event = self._torch.cuda.Event()
        event.record(self._torch.cuda.current_stream(device_id))
        return event

    def wait(self, event):
        """Blocks until ``event`` has completed."""
        if self._cuda:
            event.synchronize()

    def query(self, event):
        """Whether ``event`` has completed."""
        return event.query() if self._cuda else True

    def release(self, event):
        """Lets ``event`` go (torch frees it with the object)."""

    def alloc_pinned(self, size):
        """The address of ``size`` bytes of pinned host memory, 64-byte aligned, held until free_pinned."""
        tensor = self._torch.empty(size + 64, dtype=self._torch.uint8, pin_memory=self._cuda)
        address = (tensor.data_ptr() + 63) & ~63
        with self._lock:
            self._pinned[address] = (tensor[address - tensor.data_ptr():], size)
            bisect.insort(self._starts, address)
        return address

    def free_pinned(self, address):
        """Frees what alloc_pinned returned."""
        with self._lock:
            del self._pinned[address]
            self._starts.remove(address)

    def copy_tensor(self, device_id, address, dtype, shape):
        """A torch tensor on the device holding a copy of the device tensor described."""
        return self._typed(address, dtype, tuple(shape), device_id).clone()


def _first(mask, count):
    """The index of the first True of ``mask`` (1-d), or -1 when ``count`` (its number of Trues) is 0."""
    index = mask.to(dtype=count.dtype).argmax()
    return index - (count == 0).to(dtype=index.dtype) * (index + 1)


class _TwDevice(ctypes.Structure):
    """trainwatch/device.h's tw_device, as ctypes lays it out."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("device_type", ctypes.c_int32), ("name", ctypes.c_char_p)] + [
        (slot, ctypes.c_void_p) for slot in ("copy_to_host", "copy_to_device", "count_nonfinite", "record", "wait",
                                             "query", "release", "alloc_pinned", "free_pinned", "destroy")]


class CudaPlugin:
    """libtrainwatch_cuda, loaded: each registration (``use``) creates a fresh table on ``stream``."""

    def __init__(self, library, path, stream=0):
        """Made by ``load_cuda_plugin``.

        Args:
          library: the loaded ctypes.CDLL.
          path: where it was loaded from.
          stream: the cudaStream_t (an int) the program computes on; 0 for the legacy default stream,
            which is torch's default stream.
        """
        self.path = path
        self.stream = stream
        self.device_type = CUDA
        self.name = "cuda"
        self._create = library.tw_cuda_device_create
        self._create.restype = ctypes.c_int
        self._create.argtypes = [ctypes.POINTER(_TwDevice), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        self._last_error = library.tw_last_error_message  # libtrainwatch's, which the plugin links
        self._last_error.restype = ctypes.c_char_p
        self._last_error.argtypes = []

    def _register(self):
        table = _TwDevice(struct_size=ctypes.sizeof(_TwDevice))
        user_data = ctypes.c_void_p()
        status = self._create(ctypes.byref(table), ctypes.byref(user_data), ctypes.c_void_p(self.stream or None))
        if status != native.TW_OK:
            raise FailedPreconditionError(
                None, None, f"libtrainwatch_cuda ({self.path}) could not create its device: "
                            f"{(self._last_error() or b'').decode(errors='replace')}")
        native.set_device_table(ctypes.addressof(table), user_data.value or 0)

    def copy_tensor(self, device_id, address, dtype, shape):
        """A CUDA torch tensor holding a copy of the device tensor described (needs torch)."""
        return TorchDevice()._typed(address, dtype, tuple(shape), device_id).clone()


def _plugin_candidates():
    """Where libtrainwatch_cuda may be when no path is given: beside the libtrainwatch this process loaded
    (an install's libdir; a build tree's adapters/cuda), then the loader's search path."""
    candidates = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            loaded = {line.split()[-1] for line in maps if "/libtrainwatch.so" in line}
        for path in sorted(loaded):
            folder = os.path.dirname(path)
            candidates += [os.path.join(folder, "libtrainwatch_cuda.so"),
                           os.path.join(folder, "..", "adapters", "cuda", "libtrainwatch_cuda.so")]
    except OSError:
        pass
    found = ctypes.util.find_library("trainwatch_cuda")
    if found:
        candidates.append(found)
    return candidates


def load_cuda_plugin(path=None, stream=0):
    """Loads libtrainwatch_cuda, if it is there.

    Args:
      path: the library's file; by default $TRAINWATCH_CUDA_LIBRARY, beside libtrainwatch, or on the
        loader's path.
      stream: the cudaStream_t (an int) the program computes on; 0 for the legacy default stream.

    Returns:
      A CudaPlugin to pass to ``use``, or None when no library was found.

    Raises:
      OSError: ``path`` (or $TRAINWATCH_CUDA_LIBRARY) names a library that does not load.
    """
    explicit = path if path is not None else os.environ.get("TRAINWATCH_CUDA_LIBRARY")
    for candidate in [explicit] if explicit else _plugin_candidates():
        if not explicit and os.sep in candidate and not os.path.exists(candidate):
            continue
        try:
            return CudaPlugin(ctypes.CDLL(candidate), candidate, stream)
        except OSError:
            if explicit:
                raise
    return None


def use(device, device_type=CUDA):
    """Makes ``device`` serve the library's device tensors of its type, replacing the registration
    before it (sessions and savers running keep the one they started with).

    Args:
      device: a CudaPlugin, a TorchDevice, any object with TorchDevice's methods (copy_to_host,
        copy_to_device, count_nonfinite, record, wait, query, release, alloc_pinned, free_pinned, and
        optionally copy_tensor) and its ``device_type`` and ``name`` attributes — or None to remove the
        registration of ``device_type``.
      device_type: the type removed when ``device`` is None (a device says its own type).

    Raises:
      InvalidArgumentError: the library refused the device (a host device type, say).
      FailedPreconditionError: the CUDA plugin could not create its device (no GPU).
    """
    with _lock:
        if device is None:
            native.unset_device(device_type)
            _current.pop(device_type, None)
            return
        kind = getattr(device, "device_type", CUDA)
        if isinstance(device, CudaPlugin):
            device._register()
        else:
            native.set_device(device, kind, str(getattr(device, "name", type(device).__name__)))
        _current[kind] = device


def current(device_type=CUDA):
    """The device registered through ``use`` (or by default) for ``device_type``, or None."""
    return _current.get(device_type)


def copy_of(tensor):
    """A copy of a device tensor (a native Tensor view) on its device: what its device's copy_tensor
    makes, or a torch tensor."""
    device = current(tensor.device_type())
    copy_tensor = getattr(device, "copy_tensor", None)
    if copy_tensor is None:
        if device is None:
            raise FailedPreconditionError(None, None, f"tensor '{tensor.name()}' is on a device with no device "
                                                      f"registered to copy it")
        copy_tensor = TorchDevice().copy_tensor
    return copy_tensor(tensor.device_id(), tensor.address(), tensor.dtype(), tuple(tensor.shape()))


def to_host(value):
    """A numpy array of ``value``'s data: a device copy (a torch tensor on any device, a cupy array, what a
    device's copy_tensor made with a ``numpy()`` method) is copied to the host; anything else goes through
    ``np.asarray``."""
    import numpy as np
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            return value.float().numpy()
        return value.numpy()
    if hasattr(value, "__cuda_array_interface__"):
        for method in ("get", "numpy", "copy_to_host"):  # cupy, test devices, numba
            if callable(getattr(value, method, None)):
                return np.asarray(getattr(value, method)())
    return np.asarray(value)


def _register_default():
    """Registers the default device once, if none is: libtrainwatch_cuda when it loads and finds a GPU,
    else TorchDevice when torch has CUDA. Called at import when torch is imported, and at the first
    device tensor otherwise."""
    global _default_tried
    if _default_tried or CUDA in _current:
        return
    _default_tried = True
    try:
        plugin = load_cuda_plugin()
        if plugin is not None:
            use(plugin)
            return
    except Exception:  # noqa: BLE001 — no usable GPU for the plugin: torch may still serve
        pass
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        use(TorchDevice())


@atexit.register
def _unregister_all():
    """Lets the library release the Python devices while the interpreter can still run their methods
    (each table's free_pinned and destroy run once no session or saver holds it)."""
    for device_type in list(_current):
        try:
            use(None, device_type)
        except Exception:  # noqa: BLE001 — exiting: nothing to report to
            pass


if "torch" in sys.modules:
    _register_default()
