"""The NaN/Inf count of libtrainwatch_cuda on a GPU, against the device and torch in the same run
(docs/performance/device-scan.md). GPU only: tools/gpu-check runs it.

1. One tensor of 1 GiB, bfloat16 and float32 (Gaussian, all finite: every byte is read): the table's
   count_nonfinite + record + wait (what the library does per check), against
   - the device's read bandwidth measured here: torch's sum over the same bytes (read once) and a
     device-to-device copy (bytes read + written, halved): the better of the two;
   - torch.isfinite(t).all() (synchronised), what PyTorch users write.
   Targets: >= 0.85x the read bandwidth, >= 3x torch.isfinite(t).all().
2. A whole model: ~1.07B bfloat16 parameters in 321 tensors (20 transformer layers of width 2048 and an
   embedding) in ONE count_nonfinite, against one flat tensor of the same bytes (target: within 1.2x),
   and against PyTorch's own multi-tensor checks: a per-tensor torch.isfinite(p).all() loop and the
   fused torch._amp_foreach_non_finite_check_and_unscale_ (GradScaler's; it also writes every tensor
   back, scaled by 1.0).

Results are medians of timed repetitions after warm-ups; each line "RESULT …" is ours, the anchor and
the ratio. usage: bench_device_scan.py [repeats]
"""
import sys

import torch

from cuda_table import CudaTable, median_seconds, result

GIB = 1 << 30
READ_TARGET = 0.85
ISFINITE_TARGET = 3.0
MODEL_TARGET = 1.2


def synchronised(fn):
    def call():
        fn()
        torch.cuda.synchronize()
    return call


def read_bandwidth(t, repeats):
    """GB/s the device moves, the better of two measures over t's bytes: torch's sum of them as float32
    (each byte read once) and a device-to-device copy (bytes read + bytes written, as a bandwidth is
    measured). Also returns each of the two."""
    words = t.view(torch.float32)
    bytes_ = t.numel() * t.element_size()
    sum_s = median_seconds(synchronised(lambda: words.sum()), repeats)
    dst = torch.empty_like(t)
    copy_s = median_seconds(synchronised(lambda: dst.copy_(t)), repeats)

    return max(bytes_ / sum_s, 2 * bytes_ / copy_s) / 1e9, bytes_ / sum_s / 1e9, 2 * bytes_ / copy_s / 1e9


def one_tensor(table, dtype, repeats):
    n = GIB // torch.tensor([], dtype=dtype).element_size()
    t = (torch.randn(n, device="cuda", dtype=torch.float32) * 0.02).to(dtype)
    views = table.views([t])
    r = table.count(views)[0]
    assert r.nan_count == r.pos_inf_count == r.neg_inf_count == 0 and r.first_nonfinite_index == -1
    t[n - 3] = float("nan")  # a correctness spot check on the same buffer before timing
    r = table.count(views)[0]
    assert r.nan_count == 1 and r.first_nan_index == n - 3, (r.nan_count, r.first_nan_index)
    t[n - 3] = 0
    ours_s = median_seconds(lambda: table.count(views), repeats)
    read, by_sum, by_copy = read_bandwidth(t, repeats)
    isfinite_s = median_seconds(synchronised(lambda: torch.isfinite(t).all()), repeats)
    ours = GIB / ours_s / 1e9
    name = str(dtype).replace("torch.", "")
    print(f"{name}: ours {ours:.0f} GB/s ({ours_s * 1e3:.3f} ms); read bandwidth {read:.0f} GB/s (sum {by_sum:.0f}, "
          f"copy {by_copy:.0f}); torch.isfinite(t).all() {GIB / isfinite_s / 1e9:.0f} GB/s ({isfinite_s * 1e3:.3f} ms)")
    result(f"scan 1 GiB {name} vs read bandwidth", f"{ours:.0f} GB/s", f"{read:.0f} GB/s", ours / read,
           f">= {READ_TARGET}")
    result(f"scan 1 GiB {name} vs torch.isfinite(t).all()", f"{ours_s * 1e3:.3f} ms", f"{isfinite_s * 1e3:.3f} ms",
           isfinite_s / ours_s, f">= {ISFINITE_TARGET}")



def model_shapes(layers=20, width=2048, vocabulary=32000):
    shapes = [(vocabulary, width)]
    for _ in range(layers):
        shapes += [(width, width)] * 4 + [(width,)] * 4  # q, k, v, o and their biases
        shapes += [(4 * width, width), (4 * width,), (width, 4 * width), (width,)]  # the MLP
        shapes += [(width,)] * 4  # two norms' weights and biases
    return shapes


def whole_model(table, repeats):
    params = [torch.randn(s, device="cuda", dtype=torch.bfloat16) * 0.02 for s in model_shapes()]
    total = sum(p.numel() for p in params)
    flat = torch.randn(total, device="cuda", dtype=torch.bfloat16) * 0.02
    many, one = table.views(params), table.views([flat])
    results = table.count(many)
    assert all(results[i].first_nonfinite_index == -1 for i in range(len(params)))
    many_s = median_seconds(lambda: table.count(many), repeats)
    one_s = median_seconds(lambda: table.count(one), repeats)
    loop_s = median_seconds(lambda: bool(torch.stack([torch.isfinite(p).all() for p in params]).all()), repeats)
    found, scale = torch.zeros(1, device="cuda"), torch.ones(1, device="cuda")
    fused_s = median_seconds(synchronised(
        lambda: torch._amp_foreach_non_finite_check_and_unscale_(params, found, scale)), repeats)
    bytes_ = total * 2
    print(f"model: {total / 1e9:.2f}B bfloat16 parameters in {len(params)} tensors ({bytes_ / GIB:.2f} GiB): one call "
          f"{many_s * 1e3:.3f} ms ({bytes_ / many_s / 1e9:.0f} GB/s), one flat tensor {one_s * 1e3:.3f} ms, "
          f"torch.isfinite loop {loop_s * 1e3:.3f} ms, torch fused check+unscale {fused_s * 1e3:.3f} ms")
    result(f"whole model ({len(params)} tensors) vs one tensor of the same bytes", f"{many_s * 1e3:.3f} ms",
           f"{one_s * 1e3:.3f} ms", many_s / one_s, f"<= {MODEL_TARGET}")
    result("whole model vs a torch.isfinite(p).all() loop", f"{many_s * 1e3:.3f} ms", f"{loop_s * 1e3:.3f} ms",
           loop_s / many_s, "(none: an anchor)")
    result("whole model vs torch._amp_foreach_non_finite_check_and_unscale_", f"{many_s * 1e3:.3f} ms",
           f"{fused_s * 1e3:.3f} ms", fused_s / many_s, "(none: an anchor)")


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    if not torch.cuda.is_available():
        raise SystemExit("bench_device_scan: needs a CUDA device (torch.cuda.is_available() is False)")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    table = CudaTable()
    try:
        for dtype in (torch.bfloat16, torch.float32):
            one_tensor(table, dtype, repeats)
            torch.cuda.empty_cache()
        whole_model(table, repeats)
    finally:
        table.close()


if __name__ == "__main__":
    main()
