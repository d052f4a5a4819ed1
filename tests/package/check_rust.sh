#!/usr/bin/env bash
# The Rust crates from dist/ (tools/package.d/rust.sh) used as a user would: tests/consumer/rust/run.sh,
# against the C library installed from the release build.
set -uo pipefail
cd "$(dirname "$0")/../.."
sys=$(ls dist/trainwatch-sys-*.crate 2>/dev/null | head -1)
safe=$(ls dist/trainwatch-[0-9]*.crate 2>/dev/null | head -1)
[ -n "$sys" ] && [ -n "$safe" ] || { echo "FAIL rust artifacts: no dist/trainwatch-sys-*.crate and dist/trainwatch-*.crate"; exit 1; }
bash tests/consumer/rust/run.sh build "$sys" "$safe"
