#!/usr/bin/env bash
# The csharp artifact from dist/ (tools/package.d/csharp.sh) used as a user would: tests/consumer/csharp/run.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
artifact=$(ls dist/TrainWatch.*.nupkg 2>/dev/null | head -1)
[ -n "$artifact" ] || { echo "FAIL csharp artifact: no dist/TrainWatch.*.nupkg (tools/package.d/csharp.sh)"; exit 1; }
bash tests/consumer/csharp/run.sh "$PWD/$artifact"
