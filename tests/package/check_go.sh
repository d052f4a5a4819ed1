#!/usr/bin/env bash
# The Go module (tools/package.d/go.sh) used as a user would: tests/consumer/go/run.sh, outside the
# repository against the C library installed from the release build.
set -uo pipefail
cd "$(dirname "$0")/../.."
GOCACHE="$PWD/build/go-cache" bash tests/consumer/go/run.sh build
