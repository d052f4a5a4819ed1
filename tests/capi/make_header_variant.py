#!/usr/bin/env python3
"""Writes a copy of the public headers as another version of them would declare the versioned structs
(include/trainwatch/common.h, "Versioned structs"), for test_struct_versions.c:

  grown  every struct starting with struct_size gets one more member at its end (`uint64_t
         tw_test_grown`), as a newer header would: a program built with it runs against this library.
  v1     every TW_<STRUCT>_INIT sets struct_size to TW_<STRUCT>_SIZE_V1, the frozen first size: a program
         whose structs are exactly the first version's.

usage: make_header_variant.py grown|v1 INCLUDE_DIR STAMP_HEADER
The headers go to the directory "<STAMP_HEADER without .h>/"; the stamp header, written last, is what
the build tracks.
"""
import pathlib
import re
import sys



def first_version_only(text, name):
    """The struct as its first version declared it: the members after the one TW_<STRUCT>_SIZE_V1 ends
    with, and their values in TW_<STRUCT>_INIT, removed (a v1 program's sizeof is the v1 size)."""
    upper = name[3:].upper()
    last = re.search(r"#define TW_%s_SIZE_V1 TW_STRUCT_SIZE_THROUGH\(%s, (\w+)\)" % (upper, name), text)
    body = re.search(r"typedef struct %s \{\n((?:.*\n)*?)\} %s;" % (name, name), text)
    if last is None or body is None:
        return text
    lines = body.group(1).splitlines(keepends=True)
    code = [re.sub(r"/\*.*?\*/", "", line) for line in lines]
    end = next(i for i, line in enumerate(code) if re.search(r"\b%s\b.*;" % last.group(1), line)) + 1
    later = sum(line.count(";") for line in code[end:])
    if later == 0:
        return text
    text = text[:body.start(1)] + "".join(lines[:end]) + text[body.end(1):]
    init = re.search(r"(#define TW_%s_INIT[ \\\n]*\{)([^}]*)\}" % upper, text)
    values = init.group(2).split(",")
    return text[:init.start(2)] + ",".join(values[:-later]) + text[init.end(2):]


mode, source, stamp = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
output = stamp.with_suffix("")
if mode not in ("grown", "v1"):
    sys.exit(f"unknown mode {mode!r}")
versioned = []
for header in sorted(source.rglob("*.h")):
    text = header.read_text()
    structs = re.findall(r"typedef struct (tw_\w+) \{\n  uint32_t struct_size;", text)
    versioned += structs
    for name in structs:
        lent = name in ("tw_nan_event", "tw_summary_value", "tw_histogram")  # no initialiser
        if mode == "grown":
            text, n = re.subn(r"(typedef struct %s \{\n(?:.*\n)*?)(\} %s;)" % (name, name),
                              r"\1  uint64_t tw_test_grown; /* a member of a later version */\n\2", text)
            if not lent:  # the newer initialiser lists the new member too
                text, m = re.subn(r"(#define TW_%s_INIT[ \\\n]*\{[^}]*)\}" % name[3:].upper(), r"\1, 0}", text)
                n = n if m == 1 else 0
        else:
            text = first_version_only(text, name)
            size_v1 = "TW_%s_SIZE_V1" % name[3:].upper()
            text, n = re.subn(r"\(uint32_t\)sizeof\(%s\)" % name, size_v1, text)
            n = 1 if lent else n
        if n != 1:
            sys.exit(f"{header}: {name}: expected one place to change, found {n}")
    if header.name == "common.h":
        flag = "TW_TEST_GROWN" if mode == "grown" else "TW_TEST_V1"
        text = text.replace("#define TRAINWATCH_COMMON_H\n", f"#define TRAINWATCH_COMMON_H\n#define {flag} 1\n", 1)
    target = output / header.relative_to(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
if len(versioned) < 9:
    sys.exit(f"found only {len(versioned)} versioned structs: {versioned}")
stamp.write_text(f"/* {mode} variant of {len(versioned)} versioned structs in {output.name}/ */\n")
