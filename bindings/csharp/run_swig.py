"""Runs SWIG for C# and prepares its output for mcs.

SWIG writes one .cs file per wrapped type, so their names are not known to meson in advance: they go
to a directory of their own (emptied first), and a response file lists them for `mcs @file`. Every
generated top-level type is made internal: the SWIG layer is the assembly's plumbing under the
hand-written public API (csharp.i cannot set the modifiers of the std::vector templates, which
trainwatch.i instantiates before it includes the C# part). Every generated class calling the P/Invoke
class gets a static constructor that loads the native glue by path first (NativeLoader.cs, which names
a missing library precisely): the P/Invoke class's own static initializers run too late, after Mono
resolved the P/Invoke while compiling its caller. No static field may be initialized by a P/Invoke
(csharp_types.i makes the header's constants C# constants).

usage: run_swig.py SWIG CS_DIR RESPONSE_FILE SWIG_ARGS...
"""
import pathlib
import re
import shutil
import subprocess
import sys


# A top-level class of the layer (the P/Invoke class itself has a static constructor of SWIG's).
CLASS = re.compile(r"^internal (?:\w+ )*class (?!\w+PINVOKE\b)(\w+)[^{;]*\{\n", re.MULTILINE)
# A static field initialized by a P/Invoke: it runs with the static constructor, whose compilation has
# already resolved (and failed) the P/Invoke.
STATIC_CALL = re.compile(r"^ +(?:\w+ )*static [^(=;]*= *\w+PINVOKE\.\w+\(.*$", re.MULTILINE)
LOADER = r"""\g<0>  static \1() { global::TrainWatch.NativeLoader.Load(); }

"""


def main(swig, cs_dir, response_file, *swig_args):
    cs_dir = pathlib.Path(cs_dir).resolve()
    shutil.rmtree(cs_dir, ignore_errors=True)
    cs_dir.mkdir(parents=True)
    subprocess.run([swig, "-outdir", str(cs_dir), *swig_args], check=True)
    sources = sorted(cs_dir.glob("*.cs"))
    for source in sources:
        text = re.sub(r"^public ", "internal ", source.read_text(), flags=re.MULTILINE)
        if STATIC_CALL.search(text):
            sys.exit(f"run_swig.py: {source} reads the glue in a static initializer, before NativeLoader can load"
                     f" it: {STATIC_CALL.search(text).group(0).strip()} (csharp_types.i makes constants C# ones)")
        if "PINVOKE." in text and not source.name.endswith("PINVOKE.cs"):
            text, found = CLASS.subn(LOADER, text)
            if not found:
                sys.exit(f"run_swig.py: {source} calls the P/Invoke class outside a class it can initialize")
        source.write_text(text)
    pathlib.Path(response_file).write_text("".join(f'"{source}"\n' for source in sources))


if __name__ == "__main__":
    main(*sys.argv[1:])
