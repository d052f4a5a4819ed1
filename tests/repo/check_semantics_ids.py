#!/usr/bin/env python3
"""Every behaviour ID cited in the repository is defined in docs/tf-semantics.md (TAP output).

usage: check_semantics_ids.py SOURCE_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
ID = re.compile(r"\b([HWSTBCDV][0-9]+)\b")
# Names that look like IDs but are C language standards.
NOT_IDS = {"C89", "C90", "C99", "C17", "C18", "C23"}
SCANNED = ("include", "src", "tests", "bindings", "docs")

defined = set(re.findall(r"^- \*\*([HWSTBCDV][0-9]+)\*\* — \S", (root / "docs/tf-semantics.md").read_text(), re.M))
undefined = {}  # ID -> first "path:line" citing it
files = 0
for top in SCANNED:
    for path in sorted((root / top).rglob("*")):
        if not path.is_file() or path.name == "tf-semantics.md":
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue  # binary files cite nothing
        files += 1
        for number, line in enumerate(text.splitlines(), 1):
            for cited in ID.findall(line):
                if cited not in defined and cited not in NOT_IDS:
                    undefined.setdefault(cited, f"{path.relative_to(root)}:{number}")

print("1..2")
print(f"{'ok' if defined else 'not ok'} 1 - docs/tf-semantics.md defines {len(defined)} IDs")
if undefined:
    print(f"not ok 2 - {len(undefined)} cited IDs are not defined in docs/tf-semantics.md")
    for cited, where in sorted(undefined.items()):
        print(f"# {cited} (first cited at {where})")
    sys.exit(1)
print(f"ok 2 - every ID cited in {files} files is defined")
