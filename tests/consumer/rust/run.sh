#!/usr/bin/env bash
# The Rust artifacts as a user gets them: the two .crate files (tools/package.d/rust.sh) unpacked into a
# local directory source that replaces crates.io, the C library installed from BUILD_DIR into a fresh
# prefix (`meson install --destdir`) and found through pkg-config, and a program in a folder outside the
# repository (this folder's Cargo.toml, build.rs and src/) that trains, resumes and meets a NaN loss; the binary runs with an
# empty environment (no LD_LIBRARY_PATH): its run path comes from its build script. Prints
# "PASS case" / "FAIL case: why" per case.
#
# usage: tests/consumer/rust/run.sh BUILD_DIR TRAINWATCH_SYS_CRATE TRAINWATCH_CRATE
set -uo pipefail
build=$(realpath "$1")
crates=("$(realpath "$2")" "$(realpath "$3")")
project=$(realpath "$(dirname "$0")")
cargo=${CARGO:-/usr/bin/cargo}
source "$(dirname "$0")/../cases.sh"  # $work, case_, $status
unset LD_LIBRARY_PATH TRAINWATCH_LIB_DIR PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR RUSTFLAGS CARGO_TARGET_DIR

# The crates as cargo's directory source wants them: unpacked, with the .crate's checksum.
vendor() {
  mkdir -p "$work/vendor"
  for crate in "${crates[@]}"; do
    tar xzf "$crate" -C "$work/vendor" || return 1
    local dir
    dir=$work/vendor/$(basename "$crate" .crate)
    [ -f "$dir/Cargo.toml" ] || { echo "$crate does not unpack to $(basename "$dir")/Cargo.toml"; return 1; }
    printf '{"files":{},"package":"%s"}\n' "$(sha256sum "$crate" | cut -d' ' -f1)" > "$dir/.cargo-checksum.json"
  done
  grep -q '^\[dependencies.trainwatch-sys\]' "$work/vendor/$(basename "${crates[1]}" .crate)/Cargo.toml" ||
    { echo "the trainwatch crate does not depend on trainwatch-sys"; return 1; }
}

install_library() {
  meson install -C "$build" --destdir "$work/root" --no-rebuild --quiet > /dev/null || return 1
  [ -n "$(find "$work/root" -name trainwatch.pc)" ] || { echo "no trainwatch.pc installed"; return 1; }
}

app_setup() {
  mkdir -p "$work/app/.cargo" && cp -r "$project/Cargo.toml" "$project/build.rs" "$project/src" "$work/app/" && cat > "$work/app/.cargo/config.toml" <<TOML
[source.crates-io]
replace-with = "trainwatch-dist"
[source.trainwatch-dist]
directory = "$work/vendor"
TOML
}

# Cargo with only what a user sets: its own home (no registry cache), the installed prefix's pkg-config.
user_cargo() {
  (cd "$work/app" && env CARGO_HOME="$work/cargo-home" "$@" "$cargo" build --offline --quiet)
}

builds_with_pkg_config() {
  user_cargo PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$work/root" || return 1
  readelf -d "$work/app/target/debug/train-loop" | grep -q "R.*PATH.*\[$libdir\]" ||
    { echo "no run path to $libdir: $(readelf -d "$work/app/target/debug/train-loop" | grep PATH)"; return 1; }
}

run() { env -i "$work/app/target/debug/train-loop" "$@"; }

without_library_fails_clearly() {
  local out
  if out=$(user_cargo PKG_CONFIG_LIBDIR="$work/empty" 2>&1); then echo "built without a library"; return 1; fi
  grep -q "cannot find libtrainwatch" <<< "$out" && grep -q "TRAINWATCH_LIB_DIR" <<< "$out" ||
    { echo "unclear failure: $out"; return 1; }
}

builds_with_lib_dir() {
  user_cargo PKG_CONFIG_LIBDIR="$work/empty" TRAINWATCH_LIB_DIR="$libdir" || return 1
  run "$work/ckpt-libdir" 3 0
}

case_ rust-crates-unpack vendor
case_ rust-library-installs install_library
pc=$(find "$work/root" -name trainwatch.pc | head -1)
libdir=$(dirname "$(dirname "$pc")")
app_setup
case_ rust-consumer-builds-with-pkg-config builds_with_pkg_config
case_ rust-consumer-trains-100-steps run "$work/ckpt" 100 0
case_ rust-consumer-resumes run "$work/ckpt" 150 100
case_ rust-consumer-nan-loss-fails-the-run run "$work/nan" 100 0 40
case_ rust-sys-without-library-says-what-to-install without_library_fails_clearly
case_ rust-consumer-builds-with-lib-dir builds_with_lib_dir
exit $status
