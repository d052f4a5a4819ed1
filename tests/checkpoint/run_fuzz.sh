#!/usr/bin/env bash
# Runs the reader fuzz target briefly from valid seeds (TAP).
# usage: run_fuzz.sh FUZZ_BINARY [SECONDS]
set -u
fuzzer=$1
seconds=${2:-20}
corpus=$(mktemp -d); trap 'rm -rf "$corpus"' EXIT
echo "1..1"
if TW_FUZZ_SEED_DIR="$corpus" "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
     -print_final_stats=1 "$corpus" > "$corpus.log" 2>&1; then
  echo "ok 1 - checkpoint reader survives ${seconds}s of libFuzzer ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$corpus.log" | grep -o '[0-9]*$') inputs)"
else
  echo "not ok 1 - checkpoint reader fuzzing found a failure"; tail -40 "$corpus.log" | sed 's/^/# /'
fi
rm -f "$corpus.log"
