#!/usr/bin/env python3
"""The version is defined once, by TW_VERSION_* in include/trainwatch/common.h; every other place that
states it (meson, Cargo, the bindings' tests) must agree with the header (TAP output).

usage: check_version.py SOURCE_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
header = (root / "include/trainwatch/common.h").read_text()
parts = {k: int(v) for k, v in re.findall(r"^#define TW_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", header, re.M)}
string = re.search(r'^#define TW_VERSION_STRING "([^"]*)"$', header, re.M)
version = f"{parts.get('MAJOR')}.{parts.get('MINOR')}.{parts.get('PATCH')}"
number = parts.get("MAJOR", 0) * 10000 + parts.get("MINOR", 0) * 100 + parts.get("PATCH", 0)


def first(path, pattern):
    """The first group of pattern in the file (multi-line mode), or None."""
    match = re.search(pattern, (root / path).read_text(), re.M | re.S)
    return match.group(1) if match else None


# (where, what it states, what the header says it must be)
checks = [
    ("common.h TW_VERSION_STRING", string.group(1) if string else None, version),
    ("meson.build project()", first("meson.build", r"^project\(.*?\bversion: '([^']*)'"), version),
    *[(f"bindings/rust/{crate}/Cargo.toml", first(f"bindings/rust/{crate}/Cargo.toml", r'^\[package\].*?^version = "([^"]*)"'),
       version) for crate in ("trainwatch", "trainwatch-sys")],
    ("bindings/rust/trainwatch/Cargo.toml's trainwatch-sys",
     first("bindings/rust/trainwatch/Cargo.toml", r'^trainwatch-sys = .*?version = "=([^"]*)"'), version),
    *[(f"bindings/rust/Cargo.lock {crate}", first("bindings/rust/Cargo.lock", f'^name = "{crate}"\nversion = "([^"]*)"'),
       version) for crate in ("trainwatch", "trainwatch-sys")],
    ("bindings/rust/trainwatch-sys/src/lib.rs TW_VERSION_NUMBER",
     first("bindings/rust/trainwatch-sys/src/lib.rs", r"pub const TW_VERSION_NUMBER: u32 = (\d+);"), str(number)),
    ("bindings/rust/trainwatch/tests/session.rs",
     first("bindings/rust/trainwatch/tests/session.rs", r'HEADER_VERSION_NUMBER, "([^"]*)"'), version),
    ("bindings/go/trainwatch_test.go", first("bindings/go/trainwatch_test.go", r'text != "([^"]*)"'), version),
]
print(f"1..{len(checks)}")
failed = 0
for n, (where, stated, expected) in enumerate(checks, 1):
    if stated == expected:
        print(f"ok {n} - {where} states {expected}")
    else:
        failed += 1
        print(f"not ok {n} - {where} states {stated!r}, the header {expected!r}")
sys.exit(1 if failed else 0)
