#!/usr/bin/env python3
"""The library's ABI against the committed baseline (abi/libtrainwatch.so.0.abi), with libabigail.

usage: check_abi.py LIBRARY INCLUDE_DIR BASELINE            compare (TAP output)
       check_abi.py --update LIBRARY INCLUDE_DIR BASELINE   write the baseline from LIBRARY

Appending is free: new functions (and new enumerators) pass. Anything else abidiff reports fails: a
removed function, a changed signature, a public struct whose layout or size changed (docs/abi.md). The
opaque handles the headers declare without a body (`typedef struct tw_session tw_session;`) are left
out of the baseline and of the comparison: their layout is the library's own business. So is the
experimental tier (what the headers declare only with TW_EXPERIMENTAL_API): it may change in any release.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

update = sys.argv[1] == "--update"
lib, include_dir, baseline = sys.argv[2:5] if update else sys.argv[1:4]

opaque = set()
for header in pathlib.Path(include_dir).rglob("*.h"):
    opaque |= set(re.findall(r"typedef struct (tw_\w+) \1;", header.read_text()))
defined = set()
for header in pathlib.Path(include_dir).rglob("*.h"):
    defined |= set(re.findall(r"\bstruct (tw_\w+) \{", header.read_text()))
opaque -= defined
# The experimental tier (trainwatch/common.h: declared only with TW_EXPERIMENTAL_API) has no ABI promise:
# its functions and types are left out of the baseline and of the comparison, as the opaque handles are.
experimental_functions, experimental_types = set(), set()
for header in pathlib.Path(include_dir).rglob("*.h"):
    for block in re.findall(r"#if defined\(TW_EXPERIMENTAL_API\).*?#endif /\* TW_EXPERIMENTAL_API \*/",
                            header.read_text(), flags=re.S):
        experimental_functions |= set(re.findall(r"\bTW_API\b[^;(]*?\b(tw_\w+)\s*\(", block))
        experimental_types |= set(re.findall(r"typedef (?:struct|enum) (tw_\w+)", block))
        experimental_types |= set(re.findall(r"\(\s*\*\s*(tw_\w+)\s*\)", block))

with tempfile.NamedTemporaryFile("w", suffix=".abignore") as suppressions:
    suppressions.write("[suppress_type]\n  name_regexp = ^(%s)$\n  drop = yes\n" % "|".join(sorted(opaque)))
    if experimental_functions:
        suppressions.write("[suppress_function]\n  name_regexp = ^(%s)$\n  drop = yes\n"
                           % "|".join(sorted(experimental_functions)))
    if experimental_types:
        suppressions.write("[suppress_type]\n  name_regexp = ^(%s)$\n  drop = yes\n" % "|".join(sorted(experimental_types)))
    suppressions.flush()
    if update:
        subprocess.run(["abidw", "--suppressions", suppressions.name, "--exported-interfaces-only",
                        "--no-show-locs", "--no-comp-dir-path", "--no-corpus-path", "--no-elf-needed", "--type-id-style", "hash",
                        "--out-file", baseline, lib], check=True)
        print(f"wrote {baseline}")
        sys.exit(0)
    # --no-added-syms: additions are compatible, so any change still reported is not.
    diff = subprocess.run(["abidiff", "--suppressions", suppressions.name, "--no-added-syms", baseline, lib],
                          capture_output=True, text=True)

print("1..1")
if diff.returncode == 0:
    print(f"ok 1 - {pathlib.Path(lib).name} keeps the ABI of {baseline} (additions allowed)")
    sys.exit(0)
# abidiff's exit code is a bit set: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
kind = "an error" if diff.returncode & 3 else "an incompatible change" if diff.returncode & 8 else "a change"
print(f"not ok 1 - abidiff found {kind} against {baseline} (exit {diff.returncode}); "
      "see docs/abi.md to update the baseline on purpose")
for line in (diff.stdout + diff.stderr).splitlines():
    print("# " + line)
sys.exit(1)
