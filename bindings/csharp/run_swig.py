"""Runs SWIG for C# and prepares its output for mcs.

SWIG writes one .cs file per wrapped type, so their names are not known to meson in advance: they go
to a directory of their own (emptied first), and a response file lists them for `mcs @file`. Every
generated top-level type is made internal: the SWIG layer is the assembly's plumbing under the
hand-written public API (csharp.i cannot set the modifiers of the std::vector templates, which
trainwatch.i instantiates before it includes the C# part). The P/Invoke class's first static field
loads the native glue by path (NativeLoader.cs): SWIG's own helpers, which %pragma(csharp) imclasscode
can only follow, make the first P/Invoke in their initializers.

usage: run_swig.py SWIG CS_DIR RESPONSE_FILE SWIG_ARGS...
"""
import pathlib
import re
import shutil
import subprocess
import sys


# Static initializers run in textual order: this one before SWIG's helpers.
LOADER = r"""\1  internal static readonly bool nativeLibraryLoaded = global::TrainWatch.NativeLoader.Load();
"""


def main(swig, cs_dir, response_file, *swig_args):
    cs_dir = pathlib.Path(cs_dir).resolve()
    shutil.rmtree(cs_dir, ignore_errors=True)
    cs_dir.mkdir(parents=True)
    subprocess.run([swig, "-outdir", str(cs_dir), *swig_args], check=True)
    sources = sorted(cs_dir.glob("*.cs"))
    for source in sources:
        text = re.sub(r"^public ", "internal ", source.read_text(), flags=re.MULTILINE)
        if source.name.endswith("PINVOKE.cs"):
            text, found = re.subn(r"^((?:internal )?class \w+PINVOKE \{\n)", LOADER, text, count=1, flags=re.MULTILINE)
            if not found:
                sys.exit(f"run_swig.py: no P/Invoke class in {source} to load the native library from")
        source.write_text(text)
    pathlib.Path(response_file).write_text("".join(f'"{source}"\n' for source in sources))


if __name__ == "__main__":
    main(*sys.argv[1:])
