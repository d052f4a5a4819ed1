#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time as a test (TAP): from the committed seed corpus (copied,
# so the fuzzer's additions stay out of the source tree) plus whatever the target writes into
# $TW_FUZZ_SEED_DIR at start-up. A crash, leak, sanitizer report or timeout fails the test and prints
# the input that caused it (base64).
# usage: run_fuzz.sh NAME FUZZ_BINARY SECONDS [SEED_DIR]
set -u
name=$1 fuzzer=$2 seconds=$3 seeds=${4:-}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
[ -n "$seeds" ] && cp "$seeds"/* "$work/corpus/"
echo "1..1"
if TW_FUZZ_SEED_DIR="$work/corpus" "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
     -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/log" 2>&1; then
  echo "ok 1 - $name survives ${seconds}s of libFuzzer ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | grep -o '[0-9]*$') inputs)"
else
  echo "not ok 1 - $name: libFuzzer found a failure"
  tail -40 "$work/log" | sed 's/^/# /'
  for artifact in "$work"/artifacts/*; do
    [ -f "$artifact" ] && echo "# $(basename "$artifact"): $(head -c 4096 "$artifact" | base64 -w0)"
  done
fi
