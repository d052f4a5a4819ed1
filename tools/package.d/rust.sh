#!/usr/bin/env bash
# Builds the Rust artifacts, DIST/trainwatch-sys-<version>.crate (raw declarations; its build script
# finds the installed C library with pkg-config or TRAINWATCH_LIB_DIR) and DIST/trainwatch-<version>.crate
# (the safe API, depending on trainwatch-sys = <version>), with `cargo package` (Debian's cargo, or
# $CARGO). Offline and without cargo's verification build: Debian's cargo 1.65 verifies trainwatch by
# resolving trainwatch-sys from crates.io, which is not reachable (and holds no trainwatch-sys);
# tests/consumer/rust/run.sh builds both crates from these files instead.
#
# usage: tools/package.d/rust.sh [BUILD_DIR [DIST_DIR]]   (defaults: build, dist; BUILD_DIR only holds
#        cargo's scratch files). Prints the two .crate paths.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
mkdir -p "${2:-dist}"
dist=$(realpath "${2:-dist}")
cargo=${CARGO:-/usr/bin/cargo}
target=$build/rust-package
# Both crates in one call: newer cargo then resolves trainwatch's dependency on trainwatch-sys from the
# crate being packaged instead of crates.io. --allow-dirty: a working tree with uncommitted changes
# packages what is on disk.
CARGO_TARGET_DIR=$target "$cargo" package --offline --no-verify --allow-dirty --quiet \
  --manifest-path bindings/rust/Cargo.toml -p trainwatch-sys -p trainwatch
version=$(sed -n 's/^#define TW_VERSION_STRING "\(.*\)"$/\1/p' include/trainwatch/common.h)
for crate in trainwatch-sys trainwatch; do
  cp "$target/package/$crate-$version.crate" "$dist/"
  echo "$dist/$crate-$version.crate"
done
