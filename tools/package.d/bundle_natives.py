#!/usr/bin/env python3
"""Copies shared libraries and every library they need that is not part of the platform (glibc,
libstdc++, libgcc_s) into one folder, the way `auditwheel repair` bundles a wheel's dependencies:
each copy is named by its soname (and given one if it has none), stripped, and given the run path $ORIGIN so that it finds its
neighbours wherever the folder is unpacked, with no LD_LIBRARY_PATH.

  bundle_natives.py [--licenses DIR] DEST LIBRARY...

With --licenses, each bundled dependency's Debian copyright file (its license terms, which travel with
its copies) is written to DIR/<soname>.copyright. Prints the copies' file names in load order (every library after all it needs), one a line: the
order an application that loads them one by one by path (Java's System.load) must follow.
"""
import os
import shutil
import subprocess
import sys

# The platform every user has (glibc and the C++ runtime): never bundled. Anything else is.
PLATFORM = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "ld-linux", "libstdc++.so",
            "libgcc_s.so", "linux-vdso.so", "libresolv.so", "libutil.so")

# This project's libraries, covered by its own LICENSE.
OURS = "libtrainwatch"


def tool(*command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bundle_natives: {' '.join(command)} failed: {result.stderr.strip()}")
    return result.stdout


def is_platform(name):
    return name.startswith(PLATFORM)


def resolved_dependencies(path):
    """soname -> file for each library the dynamic linker loads for path (ldd: the whole closure)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    result = subprocess.run(["ldd", path], capture_output=True, text=True, env=env)
    found = {}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            if parts[2] == "not":
                sys.exit(f"bundle_natives: {parts[0]} (needed by the closure of {path}) not found")
            found[parts[0]] = parts[2]
    return found


def soname(path):
    name = tool("patchelf", "--print-soname", path).strip()
    return name or os.path.basename(path)


def copy_license(library, soname, folder):
    """The copyright file of the Debian package that installed library, as folder/soname.copyright."""
    owner = subprocess.run(["dpkg", "-S", os.path.realpath(library)], capture_output=True, text=True)
    if owner.returncode != 0:
        sys.exit(f"bundle_natives: no Debian package owns {library}, so its license is unknown")
    package = owner.stdout.split(":")[0]
    notice = f"/usr/share/doc/{package}/copyright"
    if not os.path.exists(notice):
        sys.exit(f"bundle_natives: {notice} (the license of {library}) is missing")
    os.makedirs(folder, exist_ok=True)
    shutil.copyfile(notice, os.path.join(folder, soname + ".copyright"))


def main():
    arguments = sys.argv[1:]
    licenses = None
    if arguments[:1] == ["--licenses"]:
        licenses, arguments = arguments[1], arguments[2:]
    if len(arguments) < 2:
        sys.exit(__doc__)
    dest, libraries = arguments[0], [os.path.abspath(library) for library in arguments[1:]]
    os.makedirs(dest, exist_ok=True)
    # soname -> source file, for the libraries asked for and their non-platform closure.
    sources = {}
    for library in libraries:
        sources[soname(library)] = library
        for name, path in resolved_dependencies(library).items():
            if not is_platform(name):
                sources.setdefault(name, path)
    if licenses is not None:
        for name, source in sources.items():
            if not name.startswith(OURS):
                copy_license(source, name, licenses)
    needs = {}
    for name, source in sources.items():
        copy = os.path.join(dest, name)
        shutil.copyfile(source, copy)
        os.chmod(copy, 0o755)
        tool("strip", "--strip-unneeded", copy)
        tool("patchelf", "--set-rpath", "$ORIGIN", copy)
        # A loaded library answers a later dlopen of its bare name by its soname (C#'s DllImport).
        if not tool("patchelf", "--print-soname", copy).strip():
            tool("patchelf", "--set-soname", name, copy)
        needs[name] = [n for n in tool("patchelf", "--print-needed", copy).split() if n in sources]
    # Dependencies first (a depth-first post-order over DT_NEEDED).
    order = []

    def visit(name, path=()):
        if name in order:
            return
        if name in path:
            sys.exit(f"bundle_natives: a dependency cycle: {' -> '.join(path + (name,))}")
        for needed in needs[name]:
            visit(needed, path + (name,))
        order.append(name)

    for name in sorted(sources):
        visit(name)
    print("\n".join(order))


if __name__ == "__main__":
    main()
