#!/usr/bin/env python3
"""Makes meson-python's wheel portable, as `auditwheel repair` does (tools/package.d/python.sh).

usage: repair_wheel.py WHEEL OUTDIR [--forbid TEXT]...

- Every shared library the wheel's ELF files need beyond glibc, libstdc++ and libgcc (the libraries
  every Linux has: the manylinux policy's list) is copied in under trainwatch/_libs/ (bundle.py);
  libtrainwatch moves there as well. Every ELF file is stripped.
- Each ELF file's run path becomes $ORIGIN-relative to trainwatch/_libs; meson-python's, which names
  the build tree, goes.
- The platform tag becomes manylinux_2_X_x86_64, X the newest GLIBC_ symbol version any file needs.
- LICENSE, and the Debian copyright file of each bundled library, go in the .dist-info's licenses/.
- No file may contain a --forbid text (the checkout's and the build's paths): the script fails naming it.
Prints what it bundled and the versions measured.
"""
import base64
import hashlib
import pathlib
import re
import shutil
import sys
import tempfile
import zipfile

from bundle import bundle, is_elf, run, write_licenses

LIBS = "trainwatch/_libs"


def versions_needed(path, prefix):
    """The versions of `prefix` (GLIBC, GLIBCXX, CXXABI) that `path` needs, as tuples."""
    section = run("readelf", "-V", "-W", path).split("Version needs section")
    text = section[1] if len(section) > 1 else ""
    return {tuple(int(p) for p in v.split(".")) for v in re.findall(r"Name: %s_([0-9.]+)\b" % prefix, text)}


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    args = sys.argv[1:]
    wheel, outdir = pathlib.Path(args[0]), pathlib.Path(args[1])
    forbidden = [args[i + 1] for i, a in enumerate(args) if a == "--forbid"]
    work = pathlib.Path(tempfile.mkdtemp())
    try:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(work)
        dist_info = next(work.glob("*.dist-info"))
        libs = work / LIBS
        libs.mkdir(parents=True, exist_ok=True)
        # meson-python's folder for the package's own libraries: they join the bundled ones.
        for folder in work.glob(".*.mesonpy.libs"):
            for lib in folder.iterdir():
                shutil.move(str(lib), libs / lib.name)
            folder.rmdir()

        elves, renamed, licenses = bundle((p for p in work.rglob("*") if p.is_file() and is_elf(p)), libs)

        glibc = max(v for elf in elves for v in versions_needed(elf, "GLIBC"))
        glibcxx = max((v for elf in elves for v in versions_needed(elf, "GLIBCXX")), default=None)
        platform = "manylinux_%d_%d_x86_64" % glibc[:2]

        license_dir = dist_info / "licenses"
        license_dir.mkdir(exist_ok=True)
        shutil.copy(pathlib.Path(__file__).resolve().parents[2] / "LICENSE", license_dir / "LICENSE")
        write_licenses(licenses, license_dir)

        wheel_file = dist_info / "WHEEL"
        tags = re.sub(r"^(Tag: [^-\n]+-[^-\n]+)-linux_x86_64$", r"\1-" + platform, wheel_file.read_text(), flags=re.M)
        wheel_file.write_text(tags.rstrip("\n") + "\n")

        files = sorted(p for p in work.rglob("*") if p.is_file())
        offenders = [(p.relative_to(work), text) for p in files for text in forbidden
                     if text.encode() in p.read_bytes()]
        if offenders:
            for path, text in offenders:
                print(f"repair_wheel: {path} contains {text}", file=sys.stderr)
            sys.exit(1)

        record = dist_info / "RECORD"
        lines = []
        for p in files:
            if p == record:
                continue
            data = p.read_bytes()
            lines.append(f"{p.relative_to(work).as_posix()},{record_hash(data)},{len(data)}")
        lines.append(f"{record.relative_to(work).as_posix()},,")
        record.write_text("\n".join(lines) + "\n")

        name = re.sub(r"-linux_x86_64\.whl$", f"-{platform}.whl", wheel.name)
        outdir.mkdir(parents=True, exist_ok=True)
        target = outdir / name
        # The .dist-info last, as the wheel format recommends.
        order = sorted((p for p in work.rglob("*") if p.is_file()),
                       key=lambda p: (p.is_relative_to(dist_info), p.relative_to(work).as_posix()))
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
            for p in order:
                z.write(p, p.relative_to(work).as_posix())
        print(f"{target}: bundled {', '.join(sorted(renamed.values())) or 'nothing'}; "
              f"needs GLIBC_{'.'.join(map(str, glibc))}"
              + (f", GLIBCXX_{'.'.join(map(str, glibcxx))}" if glibcxx else "") + f" → {platform}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
