# Sourced by tests/consumer/*/run.sh: what every consumer test starts with — a scratch folder outside
# the repository ($work, removed at exit) — and case_, the one way they report a case.
# shellcheck shell=bash disable=SC2034  # status: read by the sourcing script
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0  # the script's exit status: 1 once a case failed

case_() {  # case_ NAME COMMAND…: "PASS NAME" when the command succeeds, else "FAIL NAME: its last lines"
  local name=$1 out; shift
  if out=$("$@" 2>&1); then
    echo "PASS $name"
  else
    status=1
    echo "FAIL $name: $(printf '%s' "$out" | tail -5 | tr '\n' ' ')"
  fi
}
