#!/usr/bin/env bash
# The Go consumer test: the module as tools/package.d/go.sh ships it, copied to a temporary folder
# outside the repository; a program (main.go) using it through a `replace` directive to that copy, and
# again through the file-system module proxy; both built with cgo against an installed libtrainwatch
# (`meson install --destdir`, found through its trainwatch.pc) and run with an empty environment (no
# LD_LIBRARY_PATH): 100 steps under MonitoredTrainingSession with checkpoints, a resume to 150 from the
# checkpoint of step 100, and a NaN loss stopped by NanTensorHook. Prints "PASS case" / "FAIL case: why".
# The library directory reaches the binary as an rpath through CGO_LDFLAGS, because a --destdir tree's
# trainwatch.pc names the final prefix (/usr/local), where a real install needs none (ld.so.conf).
# usage: tests/consumer/go/run.sh [BUILD_DIR]   (env TW_INSTALL_ROOT: an install tree to use instead)
set -uo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

install="${TW_INSTALL_ROOT:-}"
if [ -z "$install" ]; then
  install="$tmp/root"
  meson install -C "$build" --destdir "$install" --no-rebuild --quiet > "$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log"; fail "go consumer install" "meson install failed"; exit 1; }
fi
pc="$(dirname "$(find "$install" -name trainwatch.pc -path '*pkgconfig*' | head -1)")"
libdir="$(dirname "$pc")"
[ -f "$pc/trainwatch.pc" ] || { fail "go consumer install" "no trainwatch.pc under $install"; exit 1; }

bash "$root/tools/package.d/go.sh" "$tmp/dist" > /dev/null || { fail "go module package" "go.sh failed"; exit 1; }
cp -r "$tmp/dist/go/trainwatch" "$tmp/module"
pass "go module package"

# build NAME GO.MOD-LINES…: the consumer program in its own module, built with only the installed tree.
build_app() {
  local name=$1; shift
  local app="$tmp/$name"
  mkdir -p "$app"
  cp "$root/tests/consumer/go/main.go" "$app/"
  printf '%s\n' "module example.com/consumer" "" "go 1.19" "" "$@" > "$app/go.mod"
  (cd "$app" && env -u LD_LIBRARY_PATH -u CGO_CFLAGS -u CGO_LDFLAGS \
     PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$install" CGO_LDFLAGS="-Wl,-rpath,$libdir" \
     GOFLAGS=-mod=mod GOPROXY="${GOPROXY_FOR_TEST:-off}" GONOSUMDB=trainwatch.dev GONOSUMCHECK=1 GOSUMDB=off \
     GOCACHE="${GOCACHE:-$tmp/gocache}" GOPATH="$tmp/gopath" go build -o consumer . ) > "$tmp/$name.log" 2>&1
}

# run_app NAME ARGS…: the binary with an empty environment.
run_app() {
  local name=$1; shift
  env -i PATH=/usr/bin:/bin "$tmp/$name/consumer" "$@" 2>"$tmp/$name.err"
}

if build_app replace "require trainwatch.dev/trainwatch v0.0.0" "replace trainwatch.dev/trainwatch => $tmp/module"; then
  pass "go consumer build (replace to a copied module)"
else
  cat "$tmp/replace.log"; fail "go consumer build (replace to a copied module)" "go build failed"; exit 1
fi
resolved="$(env -i PATH=/usr/bin:/bin ldd "$tmp/replace/consumer" | sed -n 's/.*libtrainwatch.so.0 => \([^ ]*\).*/\1/p')"
case "$resolved" in
  "$install"/*) pass "go consumer links the installed libtrainwatch ($resolved)" ;;
  *) fail "go consumer links the installed libtrainwatch" "libtrainwatch.so.0 resolves to '$resolved'" ;;
esac
if readelf -d "$tmp/replace/consumer" | grep -q "$build"; then
  fail "go consumer has no build-tree path" "$(readelf -d "$tmp/replace/consumer" | grep -i path)"
else
  pass "go consumer has no build-tree path"
fi

ckpt="$tmp/ckpt"
out="$(run_app replace train "$ckpt" 100)"
if [[ "$out" == "start_step=0 runs=100 final_step=100 latest=model.ckpt-100 "* ]]; then
  pass "go consumer trains 100 steps with checkpoints"
else
  fail "go consumer trains 100 steps with checkpoints" "'$out' $(cat "$tmp/replace.err")"
fi
w_first="${out##*w0=}"
out="$(run_app replace resume "$ckpt" 150)"
if [[ "$out" == "start_step=100 runs=50 final_step=150 latest=model.ckpt-150 "* ]] && [ "${out##*w0=}" != "$w_first" ]; then
  pass "go consumer resumes from the checkpoint of step 100"
else
  fail "go consumer resumes from the checkpoint of step 100" "'$out' $(cat "$tmp/replace.err")"
fi
out="$(run_app replace nan "$tmp/nan" 100)"
if [ "$out" = "nan_loss in run 1" ]; then
  pass "go consumer NanTensorHook fails the NaN run"
else
  fail "go consumer NanTensorHook fails the NaN run" "'$out' $(cat "$tmp/replace.err")"
fi

# The same program getting the module the way `go get` does, from the packaged module proxy.
version="$(cat "$tmp/dist/go/proxy/trainwatch.dev/trainwatch/@v/list")"
if GOPROXY_FOR_TEST="file://$tmp/dist/go/proxy" build_app proxy "require trainwatch.dev/trainwatch $version" \
   && [ "$(run_app proxy train "$tmp/ckpt-proxy" 10 | cut -d' ' -f1-3)" = "start_step=0 runs=10 final_step=10" ]; then
  pass "go consumer through the module proxy ($version)"
else
  cat "$tmp/proxy.log" "$tmp/proxy.err" 2>/dev/null; fail "go consumer through the module proxy" "build or run failed"
fi
exit $failed
