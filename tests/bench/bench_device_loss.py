"""The NaN check of a published loss on a GPU, against loss.item() in the same run
(docs/performance/device-loss.md). GPU only: tools/gpu-check runs it.

Each step computes a loss on the device (a 4096x4096 float32 matmul and a mean: a small step, so that
the check's own cost shows), then checks it:
1. The kernel alone (libtrainwatch_cuda's table through ctypes, as the library calls it per check:
   count_nonfinite of the one tensor, record, wait): 40 bytes cross to the host (one tw_device_scan).
   Anchor: the same step followed by loss.item() (4 bytes and the synchronisation every PyTorch loop
   already pays to log or test its loss), and by torch.cuda.synchronize() alone (the floor).
   Target: at most 64 bytes per check, no synchronisation beyond loss.item()'s: ours within the
   timing noise of the loss.item() step.
2. Through the Python binding: tw.MonitoredTrainingSession running the step as sess.run(step), the step
   publishing the CUDA loss as {"loss": loss}, a NanTensorHook("loss") checking it on the device, against
   the same loop with loss.item() and no session (what the session and the check cost together).

usage: bench_device_loss.py [steps]
"""
import ctypes
import sys
import tempfile

import torch

from cuda_table import CudaTable, Scan, median_seconds, result

BYTES_TARGET = 64


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    if not torch.cuda.is_available():
        raise SystemExit("bench_device_loss: needs a CUDA device (torch.cuda.is_available() is False)")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    loss = torch.empty((), device="cuda")

    def step():
        torch.mean(a @ b, out=loss)

    table = CudaTable()
    views = table.views([loss])
    bytes_per_check = ctypes.sizeof(Scan) * 1  # the results the table copies to the host: one per tensor

    def ours(n=steps):
        for _ in range(n):
            step()
            r = table.count(views)[0]
            if r.nan_count:
                raise AssertionError("NaN loss")

    def item(n=steps):
        for _ in range(n):
            step()
            if loss.item() != loss.item():
                raise AssertionError("NaN loss")

    def floor(n=steps):
        for _ in range(n):
            step()
            torch.cuda.synchronize()

    ours_s = median_seconds(ours, 5) / steps
    item_s = median_seconds(item, 5) / steps
    floor_s = median_seconds(floor, 5) / steps
    # A NaN is found: the check is real.
    loss.fill_(float("nan"))
    assert table.count(views)[0].nan_count == 1
    print(f"per step: step + table check {ours_s * 1e6:.1f} us, step + loss.item() {item_s * 1e6:.1f} us, "
          f"step + synchronize {floor_s * 1e6:.1f} us; {bytes_per_check} bytes to the host per check")
    result("loss check bytes to the host per check", f"{bytes_per_check} B", "loss.item() 4 B",
           bytes_per_check / BYTES_TARGET, f"<= 1.0 (at most {BYTES_TARGET} B)")
    result("step + loss check vs step + loss.item()", f"{ours_s * 1e6:.1f} us", f"{item_s * 1e6:.1f} us",
           ours_s / item_s, "~1.0 (no synchronisation beyond loss.item()'s)")
    table.close()

    # 2. Through the binding: the session publishes the CUDA loss; the hook counts it on the device.
    import trainwatch as tw

    def published(ctx):
        step()
        return {"loss": loss}

    with tempfile.TemporaryDirectory() as scratch:
        with tw.MonitoredTrainingSession(checkpoint_dir=scratch, save_checkpoint_secs=None,
                                         save_checkpoint_steps=None, save_summaries_steps=None,
                                         log_step_count_steps=None, hooks=[tw.NanTensorHook("loss")]) as sess:
            def session(n=steps):
                for _ in range(n):
                    sess.run(published)
            session_s = median_seconds(session, 5) / steps
            loss_nan = float("nan")

            def poisoned(ctx):
                loss.fill_(loss_nan)
                return {"loss": loss}
            try:
                sess.run(poisoned)
                raise AssertionError("NanTensorHook did not see the NaN of the CUDA loss")
            except tw.NanLossDuringTrainingError:
                pass
    print(f"per step through tw.MonitoredTrainingSession + NanTensorHook: {session_s * 1e6:.1f} us")
    result("sess.run(step) with NanTensorHook on a CUDA loss vs step + loss.item()", f"{session_s * 1e6:.1f} us",
           f"{item_s * 1e6:.1f} us", session_s / item_s, "(the session's and the check's cost together)")


if __name__ == "__main__":
    main()
