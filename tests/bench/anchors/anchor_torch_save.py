"""torch.save, torch.save + fsync (file and directory) and torch.load of the model-like state of
bench_checkpoint (w: half the bytes, m and v = m*m a quarter each; Gaussian, as anchor_ckpt.py) in a
given directory, float32 and bfloat16 states of the same byte size, best of 3. One line per dtype:
  torch <dtype> save=<GB/s> save+fsync=<GB/s> load=<GB/s>
usage: anchor_torch_save.py MiB DIRECTORY"""
import os, sys, tempfile, time
import numpy as np
import torch

MiB, where = int(sys.argv[1]), sys.argv[2]


def fsync(path, directory=False):
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    os.fsync(fd)
    os.close(fd)


def best(f, repeats=3):
    f()  # untimed, as bench_checkpoint's own runs: a job's steady state (the file overwritten)
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); f(); times.append(time.perf_counter() - t)
    return min(times)


for dtype, element in (("float32", 4), ("bfloat16", 2)):
    n = (MiB << 20) // element
    rng = np.random.default_rng(0)
    m = rng.standard_normal(n // 4, dtype=np.float32) * np.float32(1e-3)
    state = {"w": torch.from_numpy(rng.standard_normal(n // 2, dtype=np.float32) * np.float32(0.02)),
             "m": torch.from_numpy(m), "v": torch.from_numpy(m * m)}
    if dtype == "bfloat16":
        state = {k: v.to(torch.bfloat16) for k, v in state.items()}
    raw = sum(t.numel() * t.element_size() for t in state.values())
    d = tempfile.mkdtemp(dir=where)
    path = os.path.join(d, "model.pt")
    save = best(lambda: torch.save(state, path))
    save_fsync = best(lambda: (torch.save(state, path), fsync(path), fsync(d, True)))
    load = best(lambda: torch.load(path))
    os.unlink(path)
    os.rmdir(d)
    print(f"torch {dtype} save={raw / save / 1e9:.2f} save+fsync={raw / save_fsync / 1e9:.2f} load={raw / load / 1e9:.2f}")
