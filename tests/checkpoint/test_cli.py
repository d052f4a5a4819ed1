#!/usr/bin/env python3
"""trainwatch-ckpt end to end (TAP): a checkpoint saved through the C API (ctypes) is listed, verified,
shown in `state`, and exported to safetensors, which an independent reader (json + numpy) loads back
byte for byte; corrupt, truncated and missing files give the documented exit codes. `upgrade` rewrites
the checked-in version-5 file in the current format, whose export is byte for byte the original's
(built with legacy formats), or refuses it naming the version and itself (built without).

usage: test_cli.py TRAINWATCH_CKPT LIBTRAINWATCH legacy|no-legacy
"""
import ctypes
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

cli, lib_path, legacy = sys.argv[1], sys.argv[2], sys.argv[3] == "legacy"
v5_fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "v5.ckpt")
lib = ctypes.CDLL(lib_path)


class Tensor(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("data", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


# tw_dtype → (safetensors name, numpy dtype holding the same bytes)
DTYPES = {1: ("BOOL", np.bool_), 2: ("I8", np.int8), 3: ("I16", np.int16), 4: ("I32", np.int32),
          5: ("I64", np.int64), 6: ("U8", np.uint8), 7: ("U16", np.uint16), 8: ("U32", np.uint32),
          9: ("U64", np.uint64), 10: ("F16", np.float16), 11: ("BF16", np.uint16), 12: ("F32", np.float32),
          13: ("F64", np.float64), 14: ("F8_E4M3", np.uint8), 15: ("F8_E5M2", np.uint8)}
ST_NUMPY = {name: np_dtype for name, np_dtype in DTYPES.values()}

rng = np.random.default_rng(0)
arrays = {}
shapes = [(), (3, 4), (0, 2), (1000,), (2, 1, 3, 1, 2)]
for code, (st_name, np_dtype) in DTYPES.items():
    shape = shapes[code % len(shapes)]
    if np_dtype == np.bool_:
        a = rng.integers(0, 2, size=shape).astype(np.bool_)
    else:
        a = rng.integers(0, 255, size=(int(np.prod(shape, dtype=np.int64)) * np.dtype(np_dtype).itemsize,),
                         dtype=np.uint8).view(np_dtype).reshape(shape)
    arrays[f"layer{code}/{st_name.lower()}"] = (code, a.copy(order="C"))  # ascontiguousarray makes 0-d 1-d
arrays["big \"quoted\" weights"] = (12, (rng.standard_normal(3 << 20) * 0.02).astype(np.float32))

results = []


def check(name, ok, detail=""):
    results.append((name, bool(ok), detail))


def run(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=60)  # a hang fails


with tempfile.TemporaryDirectory() as d:
    views = (Tensor * len(arrays))()
    keep = []
    for i, (name, (code, a)) in enumerate(arrays.items()):
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        keep.append(shape)
        views[i] = Tensor(ctypes.sizeof(Tensor), code, name.encode(), a.ctypes.data, a.ndim, shape, None)
    saver = ctypes.c_void_p()
    lib.tw_saver_create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(Tensor), ctypes.c_size_t]
    lib.tw_saver_save.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]
    lib.tw_saver_destroy.argtypes = [ctypes.c_void_p]
    assert lib.tw_saver_create(ctypes.byref(saver), views, len(arrays)) == 0
    path = ctypes.c_char_p()
    assert lib.tw_saver_save(ctypes.byref(path), saver, f"{d}/model.ckpt".encode(), 1000) == 0
    ckpt = path.value.decode()
    lib.tw_saver_destroy(saver)
    check("the saver names the checkpoint model.ckpt-1000 (C1)", ckpt == f"{d}/model.ckpt-1000", ckpt)

    r = run("list", ckpt)
    lines = r.stdout.splitlines()
    check("list exits 0", r.returncode == 0, r.stderr)
    check("list prints one line per tensor in saved order",
          [l.split("\t")[0] for l in lines] == list(arrays), lines[:3])
    check("list prints dtype, shape and size",
          "layer12/f32\tfloat32\t[0,2]\t0 bytes" in lines and "layer8/u32\tuint32\t[1000]\t4000 bytes" in lines
          and "layer5/i64\tint64\t[]\t8 bytes" in lines, lines)

    r = run("verify", ckpt)
    check("verify of an intact checkpoint exits 0", r.returncode == 0 and "OK" in r.stdout, r.stderr)

    r = run("state", d)
    check("state prints TF's state file and the latest checkpoint",
          r.returncode == 0 and f'model_checkpoint_path: "{ckpt}"' in r.stdout
          and f'all_model_checkpoint_paths: "{ckpt}"' in r.stdout and f"# latest: {ckpt}" in r.stdout, r.stdout)

    out = f"{d}/model.safetensors"
    r = run("export-safetensors", ckpt, out)
    check("export-safetensors exits 0", r.returncode == 0, r.stderr)
    blob = open(out, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    check("the safetensors header is 8-byte aligned", (8 + n) % 8 == 0, n)
    check("the safetensors header lists every tensor", set(header) == set(arrays), sorted(header)[:3])
    bad = []
    end = 0
    for name, (code, a) in arrays.items():
        entry = header[name]
        begin, stop = entry["data_offsets"]
        end = max(end, stop)
        loaded = np.frombuffer(data[begin:stop], dtype=ST_NUMPY[entry["dtype"]]).reshape(entry["shape"])
        if entry["dtype"] != DTYPES[code][0] or list(a.shape) != entry["shape"] or loaded.tobytes() != a.tobytes():
            bad.append(name)
    check("every exported tensor has its dtype name, shape and exact bytes", not bad, bad)
    check("the data section holds exactly the tensors", end == len(data), (end, len(data)))

    # A tensor declaring more than the limit is refused before it is allocated (C22); raising the limit
    # (--max-bytes, TRAINWATCH_MAX_LOAD_BYTES) lets it through.
    refused = f"{d}/refused.safetensors"
    r = run("export-safetensors", "--max-bytes", str(1 << 20), ckpt, refused)
    check("export refuses a tensor over --max-bytes, naming it, the sizes and how to raise the limit",
          r.returncode == 3 and not os.path.exists(refused)
          and f"tensor 'big \"quoted\" weights' of checkpoint {ckpt} declares 12.0 MiB, over the 1.0 MiB limit "
          "of export-safetensors: pass --max-bytes (TRAINWATCH_MAX_LOAD_BYTES) to raise it" in r.stderr,
          (r.returncode, r.stderr))
    r = subprocess.run([cli, "export-safetensors", ckpt, refused], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "TRAINWATCH_MAX_LOAD_BYTES": str(1 << 20)})
    check("export refuses a tensor over TRAINWATCH_MAX_LOAD_BYTES",
          r.returncode == 3 and "over the 1.0 MiB limit" in r.stderr and not os.path.exists(refused),
          (r.returncode, r.stderr))
    r = subprocess.run([cli, "export-safetensors", "--max-bytes", str(12 << 20), ckpt, refused], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "TRAINWATCH_MAX_LOAD_BYTES": str(1 << 20)})
    check("--max-bytes raises the limit over the environment's",
          r.returncode == 0 and open(refused, "rb").read() == blob, (r.returncode, r.stderr))

    upgraded = f"{d}/upgraded.ckpt"
    r = run("upgrade", v5_fixture, upgraded)
    if legacy:
        check("upgrade of a version-5 file exits 0 and writes a version-6 file",
              r.returncode == 0 and open(upgraded, "rb").read()[8:12] == struct.pack("<I", 6), (r.returncode, r.stderr))
        old_export, new_export = f"{d}/v5.safetensors", f"{d}/upgraded.safetensors"
        exported = [run("export-safetensors", v5_fixture, old_export), run("export-safetensors", upgraded, new_export)]
        check("the upgraded file's tensors are the version-5 file's, byte for byte",
              all(e.returncode == 0 for e in exported) and open(old_export, "rb").read() == open(new_export, "rb").read(),
              [e.stderr for e in exported])
    else:
        check("without legacy formats, upgrade refuses a version-5 file naming its version and the command",
              r.returncode == 3 and "format version 5," in r.stderr and f"`trainwatch-ckpt upgrade {v5_fixture} NEW`"
              in r.stderr and "TW_UNIMPLEMENTED" in r.stderr and not os.path.exists(upgraded), (r.returncode, r.stderr))
    r = run("upgrade", ckpt, ckpt)
    check("upgrade onto its own source exits 3 and leaves it", r.returncode == 3 and "is the same file" in r.stderr
          and open(ckpt, "rb").read()[8:12] == struct.pack("<I", 6), (r.returncode, r.stderr))

    raw = bytearray(open(ckpt, "rb").read())
    corrupt = f"{d}/corrupt.ckpt-1"
    raw[100] ^= 0x04
    open(corrupt, "wb").write(raw)
    r = run("verify", corrupt)
    check("verify of a corrupt checkpoint exits 1 naming the file and a tensor",
          r.returncode == 1 and corrupt in r.stderr and "tensor '" in r.stderr and "TW_DATA_LOSS" in r.stderr,
          (r.returncode, r.stderr))
    r = run("export-safetensors", corrupt, f"{d}/bad.safetensors")
    check("export of a corrupt checkpoint fails and leaves no output",
          r.returncode == 1 and not os.path.exists(f"{d}/bad.safetensors"), (r.returncode, r.stderr))
    truncated = f"{d}/truncated.ckpt-1"
    open(truncated, "wb").write(bytes(raw[: len(raw) // 2]))
    r = run("verify", truncated)
    check("verify of a truncated checkpoint exits 1", r.returncode == 1, (r.returncode, r.stderr))
    r = run("list", f"{d}/missing")
    check("a missing checkpoint exits 3 (TW_NOT_FOUND)", r.returncode == 3 and "TW_NOT_FOUND" in r.stderr, r.stderr)
    r = run("frobnicate")
    check("an unknown command prints usage and exits 2", r.returncode == 2 and "usage" in r.stderr, r.returncode)
    os.remove(ckpt)
    r = run("state", d)
    check("state of a dangling latest checkpoint says none and exits 3",
          r.returncode == 3 and "# latest: none" in r.stdout, (r.returncode, r.stdout))

# FIFOs are refused at once, as the state file and as a checkpoint (C16).
with tempfile.TemporaryDirectory() as d:
    os.mkfifo(f"{d}/checkpoint")
    os.mkfifo(f"{d}/pipe")
    r = run("state", d)
    check("state of a FIFO state file exits 3 at once", r.returncode == 3 and "not a regular file" in r.stderr,
          (r.returncode, r.stderr))
    r = run("list", f"{d}/pipe")
    check("list of a FIFO exits 3 naming it (TW_INVALID_ARGUMENT)",
          r.returncode == 3 and "FIFO" in r.stderr and "TW_INVALID_ARGUMENT" in r.stderr, (r.returncode, r.stderr))

print(f"1..{len(results)}")
for i, (name, ok, detail) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    if not ok:
        print(f"# {detail}")
sys.exit(0 if all(ok for _, ok, _ in results) else 1)
