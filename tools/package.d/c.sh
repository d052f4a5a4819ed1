#!/usr/bin/env bash
# The C library as a tree to unpack anywhere: dist/trainwatch-VERSION-linux-x86_64.tar.gz holds
# trainwatch-VERSION/{bin,include,lib} as `meson install` lays them out — libtrainwatch and
# libtrainwatch_mpi (when MPI is installed), the headers with tw_dlopen.h and the C++ facade,
# trainwatch.pc and trainwatch_mpi.pc (relocatable: their prefix is where they lie), trainwatch-ckpt.
# Release build, no debug information; no run path into the build tree, `$ORIGIN` ones where a file
# needs its neighbour. libtrainwatch needs nothing beyond glibc and the C++ runtime: Highway and zstd
# are bundled beside it (bundle.py, as the wheel does), their licenses in share/doc/trainwatch/.
# libtrainwatch_mpi uses the system's MPI, the one its mpirun runs.
set -euo pipefail
build=$TW_PACKAGE_ROOT/build-package-c name=trainwatch-$TW_PACKAGE_VERSION
# tools/test's release build's options where they change a compile (--werror): its objects serve here.
options=(--werror --buildtype=release -Dtests=false -Dpython=disabled -Djava=disabled -Dcsharp=disabled
         -Dpkgconfig.relocatable=true --prefix=/"$name")
if [ -f "$build/build.ninja" ]; then meson setup --reconfigure "$build" "${options[@]}" > "$build.log"
else meson setup "$build" "${options[@]}" > "$build.log"; fi
ninja -C "$build" >> "$build.log"
stage=$build-stage
rm -rf "$stage"
meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >> "$build.log"
lib=$(dirname "$(find "$stage/$name" -name 'libtrainwatch.so.*.*.*')")
doc=$stage/$name/share/doc/trainwatch
mkdir -p "$doc"
cp "$TW_PACKAGE_ROOT/LICENSE" "$doc/LICENSE"
/usr/bin/python3 "$TW_PACKAGE_ROOT/tools/package.d/bundle.py" "$lib" "$lib"/libtrainwatch.so.*.*.* \
  --licenses "$doc" | sed 's/^/c: /'
# No file may point into the build tree (RPATH/RUNPATH of an ELF file).
if grep -rlF "$TW_PACKAGE_ROOT" "$stage"; then echo "c: the files above name the build tree" >&2; exit 1; fi
tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$TW_PACKAGE_DIST/$name-linux-x86_64.tar.gz" "$name"
echo "dist/$name-linux-x86_64.tar.gz"
