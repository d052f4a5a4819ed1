"""libtrainwatch_cuda's tw_device table through ctypes, for the GPU benchmarks that time the kernel
alone (no session, no binding): tw_cuda_device_create, then count_nonfinite / copies / record / wait
exactly as the library calls them (trainwatch/device.h).

The library is $TRAINWATCH_CUDA_LIBRARY (tools/gpu-check sets it), else the first of
build/adapters/cuda/libtrainwatch_cuda.so and the loader's search path.
"""
import ctypes
import os
import pathlib
import time

TW_OK = 0
TW_DEVICE_CUDA = 2
# trainwatch/common.h's tw_dtype for the torch dtypes the benchmarks use.
TW_DTYPES = {"float16": 10, "bfloat16": 11, "float32": 12, "float64": 13, "float8_e4m3fn": 14, "float8_e5m2": 15,
             "int32": 4, "int64": 5, "uint8": 6, "bool": 1}


class Tensor(ctypes.Structure):
    """tw_tensor, second version."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("data", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32)]


class Copy(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("src", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("name", ctypes.c_char_p)]


class Scan(ctypes.Structure):
    _fields_ = [(f, ctypes.c_int64) for f in ("nan_count", "pos_inf_count", "neg_inf_count",
                                              "first_nonfinite_index", "first_nan_index")]


_STATUS = ctypes.c_int
_SLOTS = [
    ("copy_to_host", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Copy), ctypes.c_size_t)),
    ("copy_to_device", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Copy), ctypes.c_size_t)),
    ("count_nonfinite", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Tensor),
                                         ctypes.c_size_t, ctypes.POINTER(Scan))),
    ("record", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))),
    ("wait", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_void_p)),
    ("query", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))),
    ("release", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)),
    ("alloc_pinned", ctypes.CFUNCTYPE(_STATUS, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))),
    ("free_pinned", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)),
    ("destroy", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
]


class Device(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("device_type", ctypes.c_int32), ("name", ctypes.c_char_p)] + _SLOTS


def _library_path():
    explicit = os.environ.get("TRAINWATCH_CUDA_LIBRARY")
    if explicit:
        return explicit
    built = pathlib.Path(__file__).resolve().parents[2] / "build/adapters/cuda/libtrainwatch_cuda.so"
    return str(built) if built.exists() else "libtrainwatch_cuda.so"


class CudaTable:
    """One table on the program's stream (an int cudaStream_t; 0: the legacy default stream)."""

    def __init__(self, stream=0):
        self.library = ctypes.CDLL(_library_path())
        self.library.tw_last_error_message.restype = ctypes.c_char_p
        create = self.library.tw_cuda_device_create
        create.restype = ctypes.c_int
        create.argtypes = [ctypes.POINTER(Device), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        self.table = Device(struct_size=ctypes.sizeof(Device))
        self.state = ctypes.c_void_p()
        self._check(create(ctypes.byref(self.table), ctypes.byref(self.state), ctypes.c_void_p(stream or None)),
                    "tw_cuda_device_create")
        self._results_capacity = 0
        self.results = None

    def _check(self, status, what):
        if status != TW_OK:
            raise RuntimeError(f"{what}: status {status}: {self.library.tw_last_error_message().decode()}")

    def close(self):
        if self.results is not None:
            self.table.free_pinned(self.state, ctypes.cast(self.results, ctypes.c_void_p))
            self.results = None
        self.table.destroy(self.state)

    def pinned(self, size):
        pointer = ctypes.c_void_p()
        self._check(self.table.alloc_pinned(self.state, size, ctypes.byref(pointer)), "alloc_pinned")
        return pointer.value

    def free_pinned(self, pointer):
        self.table.free_pinned(self.state, pointer)

    def wait(self, device_id=0):
        event = ctypes.c_void_p()
        self._check(self.table.record(self.state, device_id, ctypes.byref(event)), "record")
        status = self.table.wait(self.state, event)
        self.table.release(self.state, event)
        self._check(status, "wait")

    def views(self, tensors):
        """tw_tensor views of torch CUDA tensors (contiguous), kept with their shapes."""
        array = (Tensor * len(tensors))()
        shapes = []
        for view, t in zip(array, tensors):
            shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
            shapes.append(shape)
            view.struct_size = ctypes.sizeof(Tensor)
            view.dtype = TW_DTYPES[str(t.dtype).replace("torch.", "")]
            view.data = t.data_ptr()
            view.ndim = t.dim()
            view.shape = shape
            view.device_type = TW_DEVICE_CUDA
            view.device_id = t.device.index or 0
        return array, shapes

    def count(self, views, device_id=0):
        """count_nonfinite over `views` (from views()), record, wait: what the library does per check.
        Returns the results (a ctypes array of Scan in pinned memory, valid until the next call)."""
        array, _ = views
        n = len(array)
        if n > self._results_capacity:
            if self.results is not None:
                self.free_pinned(ctypes.cast(self.results, ctypes.c_void_p))
            self.results = ctypes.cast(self.pinned(n * ctypes.sizeof(Scan)), ctypes.POINTER(Scan))
            self._results_capacity = n
        self._check(self.table.count_nonfinite(self.state, device_id, array, n, self.results), "count_nonfinite")
        self.wait(device_id)
        return self.results

    def copy_to_host(self, copies, device_id=0):
        array = (Copy * len(copies))(*[Copy(d, s, n, b"bench") for d, s, n in copies])
        self._check(self.table.copy_to_host(self.state, device_id, array, len(copies)), "copy_to_host")
        self.wait(device_id)


def median_seconds(fn, repeats, warmup=2):
    """The median wall time of fn() (which must end synchronised with the device) over `repeats` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def result(name, ours, anchor, ratio, target):
    """One line gpu-check gathers into its summary: 'RESULT <name>: ours …, anchor …, ratio … (target …)'."""
    print(f"RESULT {name}: ours {ours}, anchor {anchor}, ratio {ratio:.2f} (target {target})", flush=True)
