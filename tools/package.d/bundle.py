#!/usr/bin/env python3
"""Bundles the shared libraries ELF files need beyond glibc and the C++ runtime into one folder, as
`auditwheel repair` does. Every artifact that carries libtrainwatch uses it: the C tarball (c.sh), the
wheel (repair_wheel.py imports bundle()), the jar (java.sh) and the NuGet package (csharp.sh).

usage: bundle.py LIBDIR FILE... [--keep SONAME]... [--licenses DIR] [--order FILE]

- A FILE outside LIBDIR is copied into it first, under its SONAME (the name the files that need it
  ask for); one inside LIBDIR (c.sh's libtrainwatch) is bundled where it is.
- Each library needed (recursively) beyond SYSTEM and the --keep ones (those that must be the
  system's, as an MPI library must be the one its mpirun runs) is copied into LIBDIR under a name
  of its own, libhwy-<hash>.so.1 (its SONAME too); the files that need it name the copy. One naming
  for every artifact: a JVM, a Mono or a Python process may well have loaded another build of the
  same library (the system's libzstd.so.1, a different Highway) before ours, and the dynamic linker
  answers a request for a SONAME it has loaded with that library; a name of our own keeps the two
  apart wherever the artifact is used.
- Each file is stripped of its debug information and local symbols (an artifact may be packed from a
  debug build; the dynamic symbol table stays), before its headers are patched: strip can damage a
  file patchelf has grown.
- Each file's run path becomes $ORIGIN-relative to LIBDIR; a library in LIBDIR with no SONAME gets its
  file name as one, so that once loaded by path it answers a later dlopen of that name (C#'s DllImport).
- --licenses DIR: the Debian copyright file of each bundled library's package, as DIR/PACKAGE.copyright.
  A bundled library no package owns is an error: its license would be unknown.
- --order FILE: the file names of LIBDIR's libraries, each after every one it needs, one a line — the
  order a loader that loads them one by one by path (Java's System.load) must follow.
Prints "bundled SONAME as COPY" for each dependency it copied.
"""
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys

# glibc's libraries and the C++ runtime: the manylinux policy's whitelist, left to the system.
SYSTEM = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2",
          "libutil.so.1", "libnsl.so.1", "libcrypt.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6",
          "libgcc_s.so.1"}


def run(*command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bundle: {' '.join(command)} failed: {result.stderr.strip()}")
    return result.stdout


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", "-W", str(path)))


def soname(path):
    """The SONAME of `path`, or None."""
    found = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", run("readelf", "-d", "-W", str(path)))
    return found[0] if found else None


def system_paths():
    """SONAME → path, from the dynamic linker's cache."""
    found = {}
    for line in run("ldconfig", "-p").splitlines():
        match = re.match(r"\s*(\S+) \(libc6,x86-64[^)]*\) => (\S+)", line)
        if match:
            found.setdefault(match.group(1), match.group(2))
    return found


def copyright_file(path):
    """(package, its Debian copyright file) for the package that ships `path`."""
    for candidate in (os.path.realpath(path), path, path.replace("/usr/lib/", "/lib/", 1)):
        query = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if query.returncode == 0:
            package = query.stdout.split(":")[0]
            doc = pathlib.Path("/usr/share/doc") / package / "copyright"
            if not doc.is_file():
                sys.exit(f"bundle: {doc} (the license of {path}) is missing")
            return package, doc
    sys.exit(f"bundle: no Debian package owns {path}, so its license is unknown")


def bundle(elves, libs, keep=()):
    """Bundles what `elves` (paths, patched in place) need into the folder `libs` and points their run
    paths at it. Returns (every ELF file touched, copies included; {original SONAME: copy's name};
    {Debian package: copyright file})."""
    elves = list(elves)
    for elf in elves:
        run("strip", "--strip-unneeded", str(elf))
    present = {soname(p) for p in elves} | {p.name for p in elves}
    renamed, licenses = {}, {}
    cache = system_paths()
    queue = list(elves)
    while queue:
        elf = queue.pop()
        for name in needed(elf):
            if name in SYSTEM or name in keep or name in present or name in renamed:
                continue
            source = cache.get(name)
            if source is None:
                sys.exit(f"bundle: {elf.name} needs {name}, which is neither bundled nor installed")
            data = pathlib.Path(source).read_bytes()
            stem, _, version = name.partition(".so")
            copy = libs / f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}.so{version}"
            copy.write_bytes(data)
            copy.chmod(0o755)
            run("strip", "--strip-unneeded", str(copy))
            run("patchelf", "--set-soname", copy.name, str(copy))
            renamed[name] = copy.name
            elves.append(copy)
            queue.append(copy)
            package, notice = copyright_file(source)
            licenses[package] = notice
    for elf in elves:
        for name in needed(elf):
            if name in renamed:
                run("patchelf", "--replace-needed", name, renamed[name], str(elf))
        if elf.parent.resolve() == libs.resolve() and soname(elf) is None:
            run("patchelf", "--set-soname", elf.name, str(elf))
        relative = os.path.relpath(libs, elf.parent)
        run("patchelf", "--set-rpath", "$ORIGIN" if relative == "." else "$ORIGIN/" + relative, str(elf))
    return elves, renamed, licenses


def write_licenses(licenses, folder):
    """bundle()'s {package: copyright file} as folder/PACKAGE.copyright."""
    folder.mkdir(parents=True, exist_ok=True)
    for package, notice in sorted(licenses.items()):
        shutil.copyfile(notice, folder / f"{package}.copyright")


def load_order(libraries):
    """The names of `libraries` (paths in one folder), each after every one of them it needs."""
    by_name = {p.name: p for p in libraries}
    for p in libraries:
        by_name.setdefault(soname(p) or p.name, p)
    order = []

    def visit(path, chain=()):
        if path.name in order:
            return
        if path in chain:
            sys.exit(f"bundle: a dependency cycle: {' -> '.join(p.name for p in chain + (path,))}")
        for name in needed(path):
            if name in by_name:
                visit(by_name[name], chain + (path,))
        order.append(path.name)

    for path in sorted(libraries):
        visit(path)
    return order


def main():
    args, keep, files = sys.argv[1:], [], []
    licenses_dir = order_file = None
    while args:
        arg = args.pop(0)
        if arg in ("--keep", "--licenses", "--order"):
            if not args:
                sys.exit(f"bundle: {arg} needs a value\n{__doc__}")
            value = args.pop(0)
            if arg == "--keep":
                keep.append(value)
            elif arg == "--licenses":
                licenses_dir = pathlib.Path(value)
            else:
                order_file = pathlib.Path(value)
        else:
            files.append(pathlib.Path(arg))
    if len(files) < 2:
        sys.exit(__doc__)
    libs, elves = files[0], []
    libs.mkdir(parents=True, exist_ok=True)
    for path in files[1:]:
        if path.resolve().parent == libs.resolve():
            elves.append(path)
        else:
            copy = libs / (soname(path) or path.name)
            shutil.copyfile(path, copy)
            copy.chmod(0o755)
            elves.append(copy)
    elves, renamed, licenses = bundle(elves, libs, keep)
    for name, copy in sorted(renamed.items()):
        print(f"bundled {name} as {copy}")
    if licenses_dir is not None:
        write_licenses(licenses, licenses_dir)
    if order_file is not None:
        in_libs = [p for p in elves if p.parent.resolve() == libs.resolve()]
        order_file.write_text("".join(name + "\n" for name in load_order(in_libs)))


if __name__ == "__main__":
    main()
