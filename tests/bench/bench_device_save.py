"""Checkpoints of CUDA variables from Python, against PyTorch in the same run
(docs/performance/device-save.md). GPU only: tools/gpu-check runs it.

The state: a model's weights and Adam moments on the GPU (Gaussian, sigma 0.02; moments m and v = m^2),
float32, `MiB` MiB in 96 tensors, written to /dev/shm (tmpfs: the device and the codec are measured, not
a disk) unless a directory is given.
1. Async save stall: tw.MonitoredTrainingSession(variables=state) with a CheckpointSaverHook saving every
   3rd step: the median saving run's time minus the median plain run's (each run followed by a pause
   that lets a save's background write drain; a run saved when the newest checkpoint changed).
   Anchor: a bare device-to-host copy of the same tensors into pinned memory (non_blocking copies, one
   synchronise). Target: stall <= 1.2x the bare copy. Also torch.distributed.checkpoint.async_save's
   stall (the time until it returns) where this torch has it.
2. Whole save: tw.Saver(variables=state).save() (copies, compression, checksums, fsync, commit) against
   torch.save(state, path) of the same CUDA tensors, and torch.save + fsync. Target: >= 2x torch.save.
3. Restore: saver.restore() into the CUDA variables (verified bit-exact) against
   torch.load(path, map_location="cuda") followed by copy_ into the model. Target: >= 1.5x.

usage: bench_device_save.py [MiB] [repeats] [directory]
"""
import os
import sys
import tempfile
import time

import torch

from cuda_table import median_seconds, result

STALL_TARGET = 1.2
SAVE_TARGET = 2.0
RESTORE_TARGET = 1.5


def model_state(mib):
    n = (mib << 20) // 4 // 64
    generator = torch.Generator(device="cuda").manual_seed(0)
    state = {}
    for i in range(32):
        w = torch.randn(n, device="cuda", generator=generator) * 0.02
        m = torch.randn(n // 2, device="cuda", generator=generator) * 1e-3
        state[f"layer{i}/w"] = w
        state[f"layer{i}/adam_m"] = m
        state[f"layer{i}/adam_v"] = m * m
    return state


def state_bytes(state):
    return sum(t.numel() * t.element_size() for t in state.values())


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def bare_copy_seconds(state, repeats):
    pinned = {k: torch.empty(v.shape, dtype=v.dtype, pin_memory=True) for k, v in state.items()}

    def copy():
        for k, v in state.items():
            pinned[k].copy_(v, non_blocking=True)
        torch.cuda.synchronize()
    return median_seconds(copy, repeats)


def async_stall(tw, state, directory, runs=10, every=3, drain_s=2.0):
    """Seconds a saving run takes beyond a plain run, with the session's async CheckpointSaverHook: a run
    saved when, after its write drained, the newest checkpoint changed."""
    ckpt = os.path.join(directory, "async")
    hook = tw.CheckpointSaverHook(ckpt, save_steps=every)
    plain, saving = [], []
    with tw.MonitoredTrainingSession(hooks=[hook], variables=state, save_summaries_steps=None,
                                     log_step_count_steps=None) as sess:
        time.sleep(drain_s)  # the save at creation
        for _ in range(runs):
            newest = tw.latest_checkpoint(ckpt)
            torch.cuda.synchronize()
            start = time.perf_counter()
            sess.run(lambda ctx: None)
            elapsed = time.perf_counter() - start
            time.sleep(drain_s)
            (saving if tw.latest_checkpoint(ckpt) != newest else plain).append(elapsed)
    if not saving or not plain:
        raise AssertionError(f"expected saving and plain runs, got {len(saving)} and {len(plain)}")
    plain.sort()
    saving.sort()
    return saving[len(saving) // 2] - plain[len(plain) // 2], saving[-1]


def dcp_stall(state, directory):
    try:
        import torch.distributed.checkpoint as dcp
        if not hasattr(dcp, "async_save"):
            return None, "this torch has no torch.distributed.checkpoint.async_save"
        stalls = []
        for i in range(3):
            torch.cuda.synchronize()
            start = time.perf_counter()
            future = dcp.async_save(state, checkpoint_id=os.path.join(directory, f"dcp-{i}"))
            stalls.append(time.perf_counter() - start)
            future.result()
        return sorted(stalls)[1], ""
    except Exception as e:  # DCP's requirements (a process group, …) differ by version: report, go on
        return None, f"{type(e).__name__}: {e}"


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    base = sys.argv[3] if len(sys.argv) > 3 else ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    if not torch.cuda.is_available():
        raise SystemExit("bench_device_save: needs a CUDA device (torch.cuda.is_available() is False)")
    import trainwatch as tw
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, files in {base or tempfile.gettempdir()}")
    state = model_state(mib)
    bytes_ = state_bytes(state)
    gib = bytes_ / 2**30
    with tempfile.TemporaryDirectory(dir=base) as directory:
        # 1. The stall of an async save.
        copy_s = bare_copy_seconds(state, repeats)
        stall_s, worst_s = async_stall(tw, state, directory)
        print(f"async save stall {stall_s * 1e3:.1f} ms (median; the slowest saving run {worst_s * 1e3:.1f} ms); "
              f"bare copy to pinned memory {copy_s * 1e3:.1f} ms ({bytes_ / copy_s / 1e9:.1f} GB/s) for {gib:.2f} GiB")
        result("async save stall vs a bare device-to-host copy into pinned memory", f"{stall_s * 1e3:.1f} ms",
               f"{copy_s * 1e3:.1f} ms", stall_s / copy_s, f"<= {STALL_TARGET}")
        dcp_s, why = dcp_stall(state, directory)
        if dcp_s is None:
            print(f"torch.distributed.checkpoint.async_save: not measured ({why})")
        else:
            result("async save stall vs torch.distributed.checkpoint.async_save's", f"{stall_s * 1e3:.1f} ms",
                   f"{dcp_s * 1e3:.1f} ms", dcp_s / stall_s, "(an anchor: how much shorter ours is)")

        # 2. Whole save.
        saver = tw.Saver(variables=state, max_to_keep=2)
        prefix = os.path.join(directory, "tw", "model.ckpt")
        os.makedirs(os.path.dirname(prefix))
        steps = iter(range(10**6))
        ours_s = median_seconds(lambda: saver.save(prefix, global_step=next(steps)), repeats, warmup=1)
        torch_path = os.path.join(directory, "torch.pt")
        torch_s = median_seconds(lambda: torch.save(state, torch_path), repeats, warmup=1)
        torch_sync_s = median_seconds(lambda: (torch.save(state, torch_path), fsync_path(torch_path)), repeats,
                                      warmup=1)
        print(f"whole save of {gib:.2f} GiB: trainwatch {ours_s:.3f} s ({bytes_ / ours_s / 1e9:.2f} GB/s), torch.save "
              f"{torch_s:.3f} s, torch.save + fsync {torch_sync_s:.3f} s")
        result("whole save vs torch.save of the CUDA state_dict", f"{ours_s:.3f} s", f"{torch_s:.3f} s",
               torch_s / ours_s, f">= {SAVE_TARGET}")
        result("whole save vs torch.save + fsync", f"{ours_s:.3f} s", f"{torch_sync_s:.3f} s", torch_sync_s / ours_s,
               "(an anchor)")

        # 3. Restore, bit-exact.
        path = saver.save(prefix, global_step=next(steps))
        kept = {k: v.clone() for k, v in state.items()}
        for v in state.values():
            v.fill_(float("nan"))
        ours_r = median_seconds(lambda: saver.restore(path), repeats, warmup=1)
        torch.cuda.synchronize()
        for k, v in state.items():
            if not torch.equal(v.view(torch.int32), kept[k].view(torch.int32)):
                raise AssertionError(f"restored {k} differs from what was saved")

        def torch_restore():
            loaded = torch.load(torch_path, map_location="cuda")
            for k, v in state.items():
                v.copy_(loaded[k])
            torch.cuda.synchronize()
        torch_r = median_seconds(torch_restore, repeats, warmup=1)
        print(f"restore of {gib:.2f} GiB: trainwatch {ours_r:.3f} s ({bytes_ / ours_r / 1e9:.2f} GB/s), "
              f"torch.load(map_location='cuda') + copy_ {torch_r:.3f} s")
        result("restore vs torch.load(map_location='cuda') + copy_", f"{ours_r:.3f} s", f"{torch_r:.3f} s",
               torch_r / ours_r, f">= {RESTORE_TARGET}")
        saver.close()


if __name__ == "__main__":
    main()
