#!/usr/bin/env bash
# The C tarball from dist/ as a user gets it: unpacked in a fresh folder outside the checkout, a
# program built with `pkg-config` against it alone (PKG_CONFIG_LIBDIR holds only the tarball's
# pkgconfig folder: no Highway, zstd or xxHash -dev package is seen), run with no LD_LIBRARY_PATH
# and nothing beyond glibc and the C++ runtime from the system:
# 100 steps with checkpoints, then a second run that resumes (tests/package/consumer.c).
# Prints "PASS case" / "FAIL case: why" lines (tools/check-packages).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
failed=0
pass() { echo "PASS c: $1"; }
fail() { echo "FAIL c: $1: $2"; failed=1; }
tarball=$(ls "$root"/dist/trainwatch-*-linux-x86_64.tar.gz 2>/dev/null | head -1)
[ -n "$tarball" ] || { fail "the tarball" "no dist/trainwatch-*-linux-x86_64.tar.gz (tools/package --only c)"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
prefix=$(echo "$work"/trainwatch-*)
pcdir=$(dirname "$(find "$prefix" -name trainwatch.pc)")
pc() { env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$pcdir" pkg-config "$@"; }

cflags=$(pc --cflags trainwatch 2>&1) && libs=$(pc --libs trainwatch 2>&1)
if [ $? -eq 0 ] && [[ "$cflags" != *-D* ]] && [[ "$cflags $libs" == *"$prefix"* ]]; then
  pass "pkg-config --cflags --libs trainwatch without the dependencies' .pc files, no defines: $cflags $libs"
else
  fail "pkg-config trainwatch alone" "cflags '$cflags' libs '$libs'"
fi
if [ -f "$prefix/include/tw_dlopen.h" ]; then pass "tw_dlopen.h is installed"; else fail "tw_dlopen.h" "missing"; fi
# Its Requires names mpi-c (libopenmpi-dev), which PKG_CONFIG_LIBDIR hides here: the line is read.
if grep -qE '^Requires: trainwatch = [0-9.]+, mpi-c$' "$pcdir/trainwatch_mpi.pc" 2>/dev/null; then
  pass "trainwatch_mpi.pc requires trainwatch and MPI"
else
  fail "trainwatch_mpi.pc" "missing or without its requirements"
fi
# Every ELF file: no run path but $ORIGIN-relative ones, and no debug information.
bad=""
while IFS= read -r file; do
  runpath=$(readelf -d "$file" | sed -nE 's/.*\((RPATH|RUNPATH)\).*\[(.*)\]/\2/p')
  case "$runpath" in ""|'$ORIGIN'*) ;; *) bad+=" $(basename "$file") has run path $runpath;" ;; esac
  if readelf -S "$file" | grep -q '\.debug_info'; then bad+=" $(basename "$file") has debug information;"; fi
done < <(find "$prefix" -type f \( -name '*.so*' -o -perm -u+x \))
if [ -z "$bad" ]; then pass "installed files carry only \$ORIGIN run paths and no debug information"
else fail "installed files" "$bad"; fi

cd "$work"
# shellcheck disable=SC2086
if gcc -std=c99 -Wall -Wextra -Werror "$root/tests/package/consumer.c" -o consumer $cflags $libs \
     -Wl,-rpath,"$(pc --variable=libdir trainwatch)" 2> cc.err; then
  pass "consumer.c compiles and links through pkg-config"
else
  fail "consumer.c through pkg-config" "$(head -5 cc.err)"; exit 1
fi
# ldd closure of the program: glibc, the C++ runtime and files of the unpacked tree (Highway and zstd
# bundled there), nothing else.
outside=$(env -u LD_LIBRARY_PATH ldd ./consumer | awk -v tree="$prefix/" '
  $1 ~ /^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$/ || $1 ~ /ld-linux/ { next }
  index($3, tree) != 1 { printf " %s (%s);", $1, $3 }')
if [ -z "$outside" ]; then pass "the program's ldd closure is glibc, libstdc++/libgcc and files of the tree"
else fail "the program's ldd closure" "$outside"; fi
run() { env -u LD_LIBRARY_PATH ./consumer "$work/ckpt" "$@" 2> consumer.err; }
if out=$(run 100 0); then pass "100 steps with StopAtStepHook, NanTensorHook and checkpoints ($out)"
else fail "the first run" "$out $(tail -3 consumer.err)"; fi
if out=$(run 200 100); then pass "a second run resumes from step 100 with the weights restored ($out)"
else fail "the second run" "$out $(tail -3 consumer.err)"; fi
if out=$(env -u LD_LIBRARY_PATH "$prefix/bin/trainwatch-ckpt" list "$work/ckpt/model.ckpt-200" 2>&1) && [[ "$out" == *w* ]]; then
  pass "trainwatch-ckpt from the tarball lists the checkpoint"
else
  fail "trainwatch-ckpt from the tarball" "$out"
fi
exit $failed
