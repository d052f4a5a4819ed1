#!/usr/bin/env bash
# The wheel from dist/ as a user gets it: a fresh venv, `pip install` of the wheel, offline, then
# tests/package/consumer.py from a folder outside the checkout with no LD_LIBRARY_PATH: 100 steps
# with checkpoints, then a second run that resumes. The venv sees Debian's numpy (the package's one
# dependency; --system-site-packages, as there is no index to fetch it from) and installs the wheel
# with --no-deps. Also: the wheel's ldd closure, its tag against the glibc versions it needs, no
# build path in any file, `pip show`'s license, no MPI, the sdist.
# Prints "PASS case" / "FAIL case: why" lines and the install and run times (tools/check-packages).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
failed=0
pass() { echo "PASS python: $1"; }
fail() { echo "FAIL python: $1: $2"; failed=1; }
wheel=$(ls "$root"/dist/trainwatch-*-manylinux_*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { fail "the wheel" "no dist/trainwatch-*-manylinux_*.whl (tools/package --only python)"; exit 1; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
cd "$work"  # nothing of the checkout on sys.path
venv=$work/venv
now() { date +%s.%N; }

t0=$(now)
/usr/bin/python3 -m venv --system-site-packages "$venv" &&
  env -u PYTHONPATH "$venv/bin/pip" install --quiet --no-deps --no-index "$wheel" > pip.log 2>&1
rc=$?
t1=$(now)
if [ $rc -eq 0 ]; then pass "a fresh venv installs $(basename "$wheel")"; else fail "pip install" "$(tail -5 pip.log)"; exit 1; fi
py() { env -u PYTHONPATH -u LD_LIBRARY_PATH "$venv/bin/python" "$@"; }
package=$(dirname "$(py -c 'import trainwatch; print(trainwatch.__file__)' 2>&1)")
case "$package" in
  "$venv"/*) pass "import trainwatch loads the installed package" ;;
  *) fail "import trainwatch" "$package"; exit 1 ;;
esac

# ldd closure: every library any ELF file of the package loads is glibc's, the C++ runtime, or in the package.
outside=""
glibc=0
while IFS= read -r elf; do
  while read -r name _ path _; do
    case "$name" in
      linux-vdso.so.1|libc.so.6|libm.so.6|libdl.so.2|librt.so.1|libpthread.so.0|libstdc++.so.6|libgcc_s.so.1) ;;
      /lib64/ld-linux-x86-64.so.2|ld-linux-x86-64.so.2) ;;
      *) case "$path" in "$package"/*) ;; *) outside+=" $(basename "$elf") → $name ($path);" ;; esac ;;
    esac
  done < <(ldd "$elf")
  for v in $(readelf -V -W "$elf" | sed -nE 's/.*Name: GLIBC_2\.([0-9]+).*/\1/p'); do [ "$v" -gt "$glibc" ] && glibc=$v; done
  if readelf -S "$elf" | grep -q '\.debug_info'; then outside+=" $(basename "$elf") carries debug information;"; fi
  # Every run path entry is $ORIGIN-relative and stays inside the package (none into a build tree).
  runpath=$(readelf -d "$elf" | sed -nE 's/.*\((RPATH|RUNPATH)\).*\[(.*)\]/\2/p')
  for entry in ${runpath//:/ }; do
    dir=$(realpath -m "${entry/\$ORIGIN/$(dirname "$elf")}")
    case "$entry:$dir/" in '$ORIGIN'*:"$package"/*) ;; *) outside+=" $(basename "$elf") has run path $entry;" ;; esac
  done
done < <(find "$package" -type f -name '*.so*')
if [ -z "$outside" ]; then
  pass "the ldd closure is glibc, libstdc++/libgcc and files inside the package, found through \$ORIGIN run paths inside it; no debug information"
else
  fail "the ldd closure" "$outside"
fi
tag=$(basename "$wheel" | sed -nE 's/.*-manylinux_2_([0-9]+)_x86_64\.whl$/\1/p')
if [ "$tag" = "$glibc" ]; then pass "tagged manylinux_2_${tag}: the newest GLIBC_ version its files need is 2.$glibc"
else fail "the manylinux tag" "tag 2.$tag, the files need GLIBC_2.$glibc"; fi
# The wheel's files (pip's own direct_url.json records where the wheel was installed from).
if grep -rlF -e "$root" -e /build-package --exclude=direct_url.json "$package" \
     "$venv"/lib/python3*/site-packages/trainwatch-*.dist-info > paths.txt; then
  fail "no build path in any file" "$(tr '\n' ' ' < paths.txt)"
else
  pass "no file names the checkout or a build folder"
fi
if /usr/bin/python3 -m zipfile -l "$wheel" | grep -qi 'mpi\.so\|libmpi' || find "$package" -name '*.so*' -exec ldd {} + | grep -q libmpi; then
  fail "no MPI in the wheel" "$(/usr/bin/python3 -m zipfile -l "$wheel" | grep -i mpi)"
else
  pass "the wheel neither carries nor needs an MPI library"
fi
license=$(env -u PYTHONPATH "$venv/bin/pip" show trainwatch 2>/dev/null | grep '^License:')
if [ "$license" = "License: Apache-2.0" ]; then pass "pip show: $license"; else fail "pip show's license" "$license"; fi

t2=$(now)
if out=$(py "$root/tests/package/consumer.py" "$work/ckpt" 100 0 2> run1.err); then
  pass "100 steps with StopAtStepHook, NanTensorHook and checkpoints ($out)"
else
  fail "the first run" "$out $(tail -3 run1.err)"
fi
t3=$(now)
if out=$(py "$root/tests/package/consumer.py" "$work/ckpt" 200 100 2> run2.err); then
  pass "a second run resumes from step 100 with the weights restored ($out)"
else
  fail "the second run" "$out $(tail -3 run2.err)"
fi

sdist=$(ls "$root"/dist/trainwatch-*.tar.gz 2>/dev/null | grep -v linux | head -1)
listing=$([ -n "$sdist" ] && tar tzf "$sdist")
if [[ "$listing" == */pyproject.toml* && "$listing" == */LICENSE* && "$listing" == */PKG-INFO* ]]; then
  pass "the sdist $(basename "$sdist") carries pyproject.toml, PKG-INFO and LICENSE"
else
  fail "the sdist" "missing or incomplete: ${sdist:-none}"
fi
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" \
  'BEGIN { printf "# python: fresh venv + wheel install %.1f s, first run (100 steps) %.1f s\n", b - a, d - c }'
exit $failed
