#!/usr/bin/env python3
"""The shared library exports exactly the functions the public headers declare (TAP output).

usage: check_exports.py LIBRARY INCLUDE_DIR [HEADER...]
With HEADERs (paths under INCLUDE_DIR) only those are read: an adapter library's own header. Without,
every header but the adapters' (whose functions their own libraries export).
"""
import pathlib
import re
import subprocess
import sys

lib, include_dir = sys.argv[1], pathlib.Path(sys.argv[2])
ADAPTER_HEADERS = {"trainwatch/mpi.h", "trainwatch/cuda.h"}
if sys.argv[3:]:
    headers = [include_dir / name for name in sys.argv[3:]]
else:
    headers = [h for h in include_dir.rglob("*.h") if h.relative_to(include_dir).as_posix() not in ADAPTER_HEADERS]
declared = set()
narrow_enums = []
for header in headers:
    text = header.read_text()
    declared |= set(re.findall(r"TW_API\b[^;(]*?\b(tw_\w+)\s*\(", text))
    # An out-of-range value passed through the C ABI is undefined behaviour in C++ unless the enum's
    # range covers every int: each public enum carries a 0x7FFFFFFF sentinel.
    for name, body in re.findall(r"typedef enum (tw_\w+) \{(.*?)\}", text, re.S):
        if "0x7FFFFFFF" not in body:
            narrow_enums.append(name)

nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
exported = set()
foreign = []
for line in nm.stdout.splitlines():
    parts = line.split()
    if not parts:
        continue
    symbol = parts[-1].split("@")[0]
    if symbol.startswith("tw_"):
        exported.add(symbol)
    elif symbol not in ("_init", "_fini", "_edata", "_end", "__bss_start") and not symbol.startswith("TW_"):
        foreign.append(symbol)

checks = [
    ("only tw_* symbols are exported", not foreign, foreign[:10]),
    ("every exported tw_* symbol is declared in a header", exported <= declared, sorted(exported - declared)),
    ("every declared function is exported", declared <= exported, sorted(declared - exported)),
    ("the headers declare functions at all", len(declared) > (0 if sys.argv[3:] else 10), [len(declared)]),
    ("every public enum is 32 bits wide (a 0x7FFFFFFF sentinel)", not narrow_enums, narrow_enums),
]
print(f"1..{len(checks)}")
for i, (name, ok, detail) in enumerate(checks, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    if not ok:
        print(f"# {detail}")
sys.exit(0 if all(ok for _, ok, _ in checks) else 1)
