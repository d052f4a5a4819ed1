#!/usr/bin/env python3
"""Bundles the shared libraries ELF files need beyond glibc and the C++ runtime, as `auditwheel
repair` does: the wheel (repair_wheel.py) and the C tarball (c.sh) carry Highway and zstd this way.

usage: bundle.py LIBDIR FILE... [--keep SONAME]...   (c.sh: LIBDIR holds FILE; --keep leaves a library
                                                       to the system, as libmpi must be)

- Each library needed (recursively) beyond SYSTEM and the kept ones is copied into LIBDIR under a name
  of its own, libhwy-<hash>.so.1 (its SONAME too), so that a process that has loaded another build of
  it keeps both apart; the files that need it name the copy.
- Each file's run path becomes $ORIGIN-relative to LIBDIR.
- The Debian copyright file of each bundled library's package is returned, for the artifact's licenses.
"""
import hashlib
import os
import pathlib
import re
import subprocess
import sys

# glibc's libraries and the C++ runtime: the manylinux policy's whitelist, left to the system.
SYSTEM = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2",
          "libutil.so.1", "libnsl.so.1", "libcrypt.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6",
          "libgcc_s.so.1"}


def run(*command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", "-W", str(path)))


def soname(path):
    found = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", run("readelf", "-d", "-W", str(path)))
    return found[0] if found else path.name


def system_paths():
    """SONAME → path, from the dynamic linker's cache."""
    found = {}
    for line in run("ldconfig", "-p").splitlines():
        match = re.match(r"\s*(\S+) \(libc6,x86-64[^)]*\) => (\S+)", line)
        if match:
            found.setdefault(match.group(1), match.group(2))
    return found


def copyright_file(path):
    """(package, its Debian copyright file) for the package that ships `path`, or None."""
    for candidate in (os.path.realpath(path), path, path.replace("/usr/lib/", "/lib/", 1)):
        query = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if query.returncode == 0:
            package = query.stdout.split(":")[0]
            doc = pathlib.Path("/usr/share/doc") / package / "copyright"
            return (package, doc) if doc.is_file() else None
    return None


def bundle(elves, libs, keep=()):
    """Bundles what `elves` (paths) need into the folder `libs` and points their run paths at it.
    Returns (every ELF file touched, copies included; {original SONAME: copy's name};
    {Debian package: copyright file})."""
    elves = list(elves)
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
            run("patchelf", "--set-soname", copy.name, str(copy))
            renamed[name] = copy.name
            elves.append(copy)
            queue.append(copy)
            owner = copyright_file(source)
            if owner:
                licenses[owner[0]] = owner[1]
    for elf in elves:
        for name in needed(elf):
            if name in renamed:
                run("patchelf", "--replace-needed", name, renamed[name], str(elf))
        relative = os.path.relpath(libs, elf.parent)
        run("patchelf", "--set-rpath", "$ORIGIN" if relative == "." else "$ORIGIN/" + relative, str(elf))
    return elves, renamed, licenses


def main():
    args = sys.argv[1:]
    keep = [args[i + 1] for i, a in enumerate(args) if a == "--keep"]
    paths = [a for i, a in enumerate(args) if a != "--keep" and (i == 0 or args[i - 1] != "--keep")]
    libs, files = pathlib.Path(paths[0]), [pathlib.Path(p) for p in paths[1:]]
    _, renamed, licenses = bundle(files, libs, keep)
    for name, copy in sorted(renamed.items()):
        print(f"bundled {name} as {copy}")
    for package, path in sorted(licenses.items()):
        print(f"license {package} {path}")


if __name__ == "__main__":
    main()
