"""What the Python binding costs, measured against anchors in the same run.

1. sess.run(step) per step with 5 built-in hooks on steps where none triggers, against calling the same
   step function directly (target: under 10 µs per step of overhead).
2. trainwatch.scan / check_numerics on a 256 MiB array, against the C kernels (tw_scan and
   tw_check_numerics called through ctypes on the same buffer; target: at least 0.9x their throughput).
3. The NaN checks numpy and PyTorch users write (np.isnan(a).any(), torch.isnan(t).any(),
   torch.isfinite(t).all()) against trainwatch.scan on the very same 256 MiB array: same memory, same
   pages, timed in turn (docs/performance/scan.md's targets: 2x numpy on float32, 20x PyTorch on bfloat16).

usage: PYTHONPATH=<build>/bindings/python bench_python_overhead.py [steps]
"""
import ctypes
import sys
import tempfile
import time

import numpy as np
import torch

import trainwatch as tw

NEVER = 10 ** 12
LOSS = np.float32(0.5)


def step(ctx):
    return {"loss": LOSS}


def best_seconds_per_call(fn, calls, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(calls)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def interleaved_best(contenders, repeats):
    """Best seconds per call of each contender, timed in turn so that machine load hits all alike."""
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn(1)
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def five_quiet_hooks(checkpoint_dir):
    """Built-in hooks that watch every step but never fire in the measured range."""
    return [tw.StopAtStepHook(last_step=NEVER),
            tw.NanTensorHook("loss"),  # fetches and checks the loss on every step
            tw.CheckpointSaverHook(checkpoint_dir, save_steps=NEVER),
            tw.StepCounterHook(every_n_steps=NEVER),
            tw.SummarySaverHook(save_steps=NEVER, output_dir=checkpoint_dir, summary_op="loss")]


def run_overhead(steps):
    def direct(n):
        for _ in range(n):
            step(None)

    with tempfile.TemporaryDirectory() as checkpoint_dir, \
            tw.MonitoredSession(hooks=five_quiet_hooks(checkpoint_dir)) as sess:
        def hooked(n):
            for _ in range(n):
                sess.run(step)
        hooked(1000)  # warm up
        anchor = best_seconds_per_call(direct, steps)
        figure = best_seconds_per_call(hooked, steps)
    overhead_us = (figure - anchor) * 1e6
    print(f"sess.run(step) with 5 built-in hooks, {steps} steps, best of 5")
    print(f"  anchor: direct call of the step   {anchor * 1e6:8.3f} µs/step")
    print(f"  trainwatch: sess.run(step)        {figure * 1e6:8.3f} µs/step")
    print(f"  overhead {overhead_us:.2f} µs/step (target < 10), ratio {figure / anchor:.1f}x")
    return overhead_us


class _TensorView(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("data", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class _ScanResult(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("nan_count", ctypes.c_int64), ("pos_inf_count", ctypes.c_int64),
                ("neg_inf_count", ctypes.c_int64), ("first_nonfinite_index", ctypes.c_int64)]


def c_kernels(library, data_pointer, dtype, count):
    """tw_scan and tw_check_numerics straight on the buffer: the C kernels' throughput, no binding."""
    shape = (ctypes.c_int64 * 1)(count)
    view = _TensorView(ctypes.sizeof(_TensorView), dtype, None, data_pointer, 1, shape, None)
    result = _ScanResult(ctypes.sizeof(_ScanResult), 0, 0, 0, -1)

    def scan(n):
        for _ in range(n):
            if library.tw_scan(ctypes.byref(result), ctypes.byref(view)) != 0:
                raise RuntimeError("tw_scan failed")

    def check(n):
        for _ in range(n):
            if library.tw_check_numerics(ctypes.byref(view), b"x") != 0:
                raise RuntimeError("tw_check_numerics failed")
    return scan, check


def scan_throughput():
    library = ctypes.CDLL("libtrainwatch.so.0")  # the library the extension module already loaded
    size = 256 << 20
    print(f"256 MiB arrays (kernels: {tw.native.numerics_target()}), best of 9, interleaved")
    ratios = []
    cases = [("numpy float32", np.ones(size // 4, np.float32)),
             ("torch bfloat16", torch.ones(size // 2, dtype=torch.bfloat16))]
    for label, array in cases:
        if isinstance(array, np.ndarray):
            pointer, dtype, count = array.ctypes.data, tw.native.TW_FLOAT32, array.size
        else:
            pointer, dtype, count = array.data_ptr(), tw.native.TW_BFLOAT16, array.numel()
        c_scan, c_check = c_kernels(library, pointer, dtype, count)
        best = interleaved_best({
            "C tw_scan": c_scan,
            "trainwatch.scan": lambda n: [tw.scan(array) for _ in range(n)],
            "C tw_check_numerics": c_check,
            "trainwatch.check_numerics": lambda n: [tw.check_numerics(array, "x") for _ in range(n)],
        }, repeats=9)
        for anchor, figure in (("C tw_scan", "trainwatch.scan"), ("C tw_check_numerics", "trainwatch.check_numerics")):
            ratio = best[anchor] / best[figure]
            ratios.append(ratio)
            print(f"  {label:15s} anchor: {anchor:20s} {size / best[anchor] / 1e9:6.2f} GB/s   "
                  f"{figure:26s} {size / best[figure] / 1e9:6.2f} GB/s   ratio {ratio:.2f} (target >= 0.9)")
    return min(ratios)


def same_array_checks():
    size = 256 << 20
    print(f"\nthe same 256 MiB array checked by its own library and by trainwatch.scan, best of 9, interleaved")
    a = np.ones(size // 4, np.float32)
    t = torch.ones(size // 2, dtype=torch.bfloat16)
    cases = [("numpy float32", a, "np.isnan(a).any()", lambda n: [bool(np.isnan(a).any()) for _ in range(n)], 2),
             ("torch bfloat16", t, "torch.isnan(t).any()", lambda n: [bool(torch.isnan(t).any()) for _ in range(n)], 20),
             ("torch bfloat16", t, "torch.isfinite(t).all()",
              lambda n: [bool(torch.isfinite(t).all()) for _ in range(n)], 20)]
    for label, array, anchor, check, target in cases:
        best = interleaved_best({anchor: check, "trainwatch.scan": lambda n: [tw.scan(array) for _ in range(n)]},
                                repeats=9)
        ratio = best[anchor] / best["trainwatch.scan"]
        print(f"  {label:15s} anchor: {anchor:24s} {size / best[anchor] / 1e9:6.2f} GB/s   trainwatch.scan "
              f"{size / best['trainwatch.scan'] / 1e9:6.2f} GB/s   ratio {ratio:5.1f}x "
              f"(target >= {target}x: {'met' if ratio >= target else 'MISSED'})")


def main(argv):
    steps = int(argv[0]) if argv else 200000
    overhead_us = run_overhead(steps)
    worst_ratio = scan_throughput()
    same_array_checks()
    print(f"summary: overhead {overhead_us:.2f} µs/step, worst scan throughput ratio {worst_ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
