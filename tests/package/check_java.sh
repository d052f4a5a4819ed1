#!/usr/bin/env bash
# The java artifact from dist/ (tools/package.d/java.sh) used as a user would: tests/consumer/java/run.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
artifact=$(ls dist/trainwatch-*.jar 2>/dev/null | head -1)
[ -n "$artifact" ] || { echo "FAIL java artifact: no dist/trainwatch-*.jar (tools/package.d/java.sh)"; exit 1; }
bash tests/consumer/java/run.sh "$PWD/$artifact"
