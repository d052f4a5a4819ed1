#!/usr/bin/env python3
"""The folders of src/ form the layers src/layers.txt declares, and every arrow points down (TAP output).

Reads every #include of src/ against the declared order: a file in src/<layer>/ may include the public
headers, outside libraries and the headers of its own layer and of the layers it reaches down
src/layers.txt, nothing above it (up) or beside it (sideways). Each offending include is printed.
A sub-layer ("checkpoint/codec": the folder src/checkpoint/codec/, its headers included as
"checkpoint/codec/huffman.h") is a layer like any other; its parent layer owns only the files of its
own folder and must build on each of its sub-layers, which are declared before it.

With BUILD_DIR (a meson build directory) it also checks that the build enforces the same: each layer's
compile command from compile_commands.json preprocesses an #include of every other layer, which must
succeed exactly for the layers it reaches.

usage: check_layers.py SOURCE_ROOT [BUILD_DIR]
"""
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
PUBLIC = ("trainwatch.h", "trainwatch/")
# Folders of src/ that are not layers: libraries of their own over the public API only (the core never
# links them). Checked below to include nothing but public and system headers.
ADAPTERS = {"mpi": "libtrainwatch_mpi (trainwatch/mpi.h)"}


def read_layers(path):
    """[(layer, [the layers it builds on])] bottom first, as src/layers.txt declares them."""
    layers = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, below = line.partition(":")
            layers.append((name.strip(), below.split()))
    return layers


def reach_of(layers):
    """layer -> the set of layers it may include (itself and everything it builds on, transitively)."""
    reach = {}
    for name, below in layers:
        reach[name] = {name}.union(*(reach.get(b, {b}) for b in below))
    return reach


def layer_of(target, names):
    """The layer whose folder holds the included `target` (the longest declared prefix), or None."""
    folder = target.rpartition("/")[0]
    while folder:
        if folder in names:
            return folder
        folder = folder.rpartition("/")[0]
    return None


def own_files(src, name, names):
    """The sources of layer `name`: those of its folder, not of its sub-layers' folders."""
    for path in sorted((src / name).rglob("*")):
        if path.is_file() and path.suffix in (".h", ".cc", ".c", ".inc") and \
                layer_of(path.relative_to(src).as_posix(), names) == name:
            yield path


def main():
    root = pathlib.Path(sys.argv[1])
    build = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
    src = root / "src"
    layers = read_layers(src / "layers.txt")
    names = [name for name, _ in layers]
    reach = reach_of(layers)
    cases = []  # (ok, description, [detail lines])

    # 1. The declaration matches the tree: every folder of src/ is a layer, declared once, bottom first.
    problems = []
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())
    # The folders inside a layer's folder are its sub-layers: each declared, below its parent.
    for name in names:
        if "/" in name or not (src / name).is_dir():
            continue
        for sub in sorted(p for p in (src / name).rglob("*") if p.is_dir()):
            sub_name = sub.relative_to(src).as_posix()
            if sub_name not in names:
                problems.append(f"src/{sub_name}/ is not declared in src/layers.txt (a sub-layer of {name})")
    for folder in folders:
        if folder in ADAPTERS:
            for source in sorted((src / folder).glob("*.[ch]*")):
                for line in source.read_text(errors="replace").splitlines():
                    match = INCLUDE.match(line)
                    if match and '"' in line and not match.group(1).startswith(PUBLIC):
                        problems.append(f"{source.relative_to(root)} ({ADAPTERS[folder]}) includes {match.group(1)}, "
                                        "which is not a public header")
        elif folder not in names:
            problems.append(f"src/{folder}/ is not declared in src/layers.txt")
    for i, (name, below) in enumerate(layers):
        if not (src / name).is_dir():
            problems.append(f"{name} is declared but src/{name}/ does not exist")
        if names.count(name) > 1:
            problems.append(f"{name} is declared {names.count(name)} times")
        for b in below:
            if b not in names[:i]:
                problems.append(f"{name} builds on {b}, which is not declared below it")
        parent = name.rpartition("/")[0]
        if parent and parent in names[:i]:
            problems.append(f"the sub-layer {name} is declared after its layer {parent}")
        for sub in names[:i]:
            if sub.startswith(name + "/") and sub not in reach[name]:
                problems.append(f"{name} does not build on its sub-layer {sub}")
    cases.append((not problems, f"src/layers.txt declares the {len(names)} layer folders of src/ "
                  "(sub-layers as layer/sub), bottom first: "
                  + " < ".join(names), problems))

    # 2. Every include of every layer points down (or stays in the layer).
    for name in names:
        offending = []
        count = 0
        for path in own_files(src, name, names):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                count += 1
                target = match.group(1)
                where = f"{path.relative_to(root)}:{number}: #include \"{target}\""
                if target.startswith(PUBLIC):
                    continue
                if ".." in pathlib.PurePosixPath(target).parts or (path.parent / target).is_file():
                    offending.append(f"{where} — name a header by its layer folder, not by a relative path")
                    continue
                top = layer_of(target, names)
                if top is None:
                    continue  # a system or outside library's header
                if top not in reach[name]:
                    direction = "up" if name in reach[top] else "sideways"
                    offending.append(f"{where} — points {direction}: {name} reaches only "
                                     + ", ".join(n for n in names if n in reach[name]))
        allowed = ", ".join(n for n in names if n in reach[name] and n != name) or "nothing below"
        cases.append((not offending, f"{name}: {count} includes stay in {name} or point down to {allowed}",
                      offending))

    # 3. The build refuses what this check refuses: each layer's real compile command, preprocessing.
    if build is not None:
        commands = json.loads((build / "compile_commands.json").read_text())
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                command = next((c for c in commands
                                if pathlib.Path(c["directory"], c["file"]).resolve().parent == (src / name).resolve()
                                and f"trainwatch_{name.replace('/', '_')}.a.p" in c["command"]), None)
                if command is None:
                    cases.append((False, f"{name}: no compile command in compile_commands.json", []))
                    continue
                args = shlex.split(command["command"])
                kept, skip = [], False
                for arg in args:
                    if skip:
                        skip = False
                    elif arg in ("-o", "-MF", "-MQ", "-MT"):
                        skip = True
                    elif arg in ("-c", "-MD", "-MMD") or arg == command["file"]:
                        continue
                    else:
                        kept.append(arg)
                wrong = []
                for other in names:
                    header = sorted((src / other).glob("*.h"))[0].name
                    probe = pathlib.Path(tmp, f"{name}_{other}.cc".replace("/", "_"))
                    probe.write_text(f'#include "{other}/{header}"\n')
                    result = subprocess.run(kept + ["-E", str(probe), "-o", "/dev/null"], cwd=command["directory"],
                                            capture_output=True, text=True)
                    compiles = result.returncode == 0
                    if compiles != (other in reach[name]):
                        wrong.append(f'#include "{other}/{header}" in {name} '
                                     + ("compiles, but must not" if compiles else "fails: " + result.stderr.strip()[:300]))
                cases.append((not wrong, f"{name}: its build reaches exactly "
                              + ", ".join(n for n in names if n in reach[name]) + "; any other layer's include fails",
                              wrong))

    print(f"1..{len(cases)}")
    for number, (ok, description, details) in enumerate(cases, 1):
        print(f"{'ok' if ok else 'not ok'} {number} - {description}")
        for detail in details:
            print(f"# {detail}")
    return 0 if all(ok for ok, _, _ in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
