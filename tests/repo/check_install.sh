#!/usr/bin/env bash
# `meson install` yields a usable library: a program built against the installed tree through
# pkg-config compiles, links to libtrainwatch.so.0 and runs a session; the C++ facade (trainwatch.hpp
# and its parts) compiles from the installed tree (TAP output).
# usage: check_install.sh BUILD_DIR
set -u
build=$1
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
echo "1..4"
if DESTDIR="$stage" meson install -C "$build" --no-rebuild --quiet > "$stage.log" 2>&1; then
  echo "ok 1 - meson install"
else
  echo "not ok 1 - meson install"; sed 's/^/# /' "$stage.log"; rm -f "$stage.log"; exit 0
fi
rm -f "$stage.log"
pc=$(dirname "$(find "$stage" -name trainwatch.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config --cflags --libs trainwatch)
libdir=$(PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config --variable=libdir trainwatch)
cat > "$stage/use.c" <<'C'
#include <stdio.h>
#include <trainwatch.h>
static tw_status step(void *u, tw_step_context *ctx) { (void)ctx; ++*(int *)u; return TW_OK; }
int main(void) {
  tw_hook *stop; tw_session *s; int calls = 0;
  if (tw_version_number() != TW_VERSION_NUMBER) return 1;
  if (tw_stop_at_step_hook_create(&stop, TW_UNSET, 3) != TW_OK) return 2;
  if (tw_monitored_session_create(&s, NULL, &stop, 1) != TW_OK) return 3;
  tw_hook_destroy(stop);
  while (!tw_session_should_stop(s)) if (tw_session_run(s, NULL, 0, step, &calls) != TW_OK) return 4;
  if (tw_session_close(s) != TW_OK) return 5;
  if (tw_session_destroy(s) != TW_OK) return 7;
  printf("%d\n", calls);
  return calls == 3 ? 0 : 6;
}
C
# shellcheck disable=SC2086
if gcc -std=c99 -Wall -Werror "$stage/use.c" -o "$stage/use" $flags -Wl,-rpath,"$stage$libdir" 2> "$stage/cc.err"; then
  echo "ok 2 - a program compiles and links against the installed tree through pkg-config"
else
  echo "not ok 2 - compile against the installed tree"; sed 's/^/# /' "$stage/cc.err"; exit 0
fi
if [ "$("$stage/use")" = "3" ] && readelf -d "$stage/use" | grep -q 'libtrainwatch.so.0'; then
  echo "ok 3 - it runs a session with the installed libtrainwatch.so.0"
else
  echo "not ok 3 - the installed program failed"
fi
cat > "$stage/use.cc" <<'CXX'
#include <trainwatch.hpp>
int main() { return trainwatch::version_number() == TW_VERSION_NUMBER ? 0 : 1; }
CXX
# shellcheck disable=SC2086
if g++ -std=c++17 -Wall -Werror "$stage/use.cc" -o "$stage/use_cxx" $flags -Wl,-rpath,"$stage$libdir" 2> "$stage/cxx.err" &&
   "$stage/use_cxx"; then
  echo "ok 4 - the C++ facade, installed next to the C headers, compiles and runs"
else
  echo "not ok 4 - the installed C++ facade"; sed 's/^/# /' "$stage/cxx.err"
fi
