"""Runs SWIG for C# and prepares its output for mcs.

SWIG writes one .cs file per wrapped type, so their names are not known to meson in advance: they go
to a directory of their own (emptied first), and a response file lists them for `mcs @file`. Every
generated top-level type is made internal: the SWIG layer is the assembly's plumbing under the
hand-written public API (csharp.i cannot set the modifiers of the std::vector templates, which
trainwatch.i instantiates before it includes the C# part).

usage: run_swig.py SWIG CS_DIR RESPONSE_FILE SWIG_ARGS...
"""
import pathlib
import re
import shutil
import subprocess
import sys


def main(swig, cs_dir, response_file, *swig_args):
    cs_dir = pathlib.Path(cs_dir).resolve()
    shutil.rmtree(cs_dir, ignore_errors=True)
    cs_dir.mkdir(parents=True)
    subprocess.run([swig, "-outdir", str(cs_dir), *swig_args], check=True)
    sources = sorted(cs_dir.glob("*.cs"))
    for source in sources:
        text = source.read_text()
        source.write_text(re.sub(r"^public ", "internal ", text, flags=re.MULTILINE))
    pathlib.Path(response_file).write_text("".join(f'"{source}"\n' for source in sources))


if __name__ == "__main__":
    main(*sys.argv[1:])
