#!/usr/bin/python3
"""Checks a Chrome trace written by trainwatch with nothing but Python's json module (TAP output).

usage: check_trace_file.py WRITE_TRACE_SAMPLE
"""
import json
import os
import subprocess
import sys
import tempfile

EXPECTED_NAMES = [
    "before_run/StepCounterHook",
    "step_fn",
    "checkpoint save",
    'na\u00efve "quoted"\n\ttab\\ \x01 \u20ac',
    "bad utf-8 \ufffd\ufffd\ufffd end",  # each invalid byte replaced by U+FFFD
]


def main():
    checks = []

    def check(name, ok, detail=""):
        checks.append((name, bool(ok), detail))

    with tempfile.TemporaryDirectory() as out_dir:
        run = subprocess.run([sys.argv[1], out_dir], capture_output=True, text=True)
        path = run.stdout.strip()
        check("the program wrote a trace", run.returncode == 0 and os.path.isfile(path), run.stderr)
        if run.returncode != 0:
            return report(checks)
        check("named timeline-<step>.json", os.path.basename(path) == "timeline-100.json", path)
        check("no temporary file left beside it", os.listdir(out_dir) == ["timeline-100.json"], os.listdir(out_dir))
        with open(path, "rb") as f:
            raw = f.read()
        try:
            doc = json.loads(raw.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            check("valid UTF-8 and strict JSON (no NaN/Infinity)", True)
        except ValueError as e:
            check("valid UTF-8 and strict JSON (no NaN/Infinity)", False, repr(e))
            return report(checks)
        check("top level is {traceEvents, displayTimeUnit: ms}",
              isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list) and doc.get("displayTimeUnit") == "ms")
        events = doc["traceEvents"]
        spans = [e for e in events if e.get("ph") == "X"]
        meta = [e for e in events if e.get("ph") == "M"]
        check("every event is a complete (X) or metadata (M) event", len(spans) + len(meta) == len(events))
        check("metadata names the process and both threads",
              {(e["name"], e["pid"], e.get("tid"), e["args"]["name"]) for e in meta} ==
              {("process_name", 1, None, "trainwatch"), ("thread_name", 1, 1, "session"),
               ("thread_name", 1, 2, "checkpoint writer")}, meta)
        well_formed = all(
            isinstance(e["name"], str) and isinstance(e["cat"], str) and isinstance(e["ts"], (int, float))
            and isinstance(e["dur"], (int, float)) and e["dur"] >= 0 and isinstance(e["pid"], int)
            and isinstance(e["tid"], int) and isinstance(e["args"], dict) for e in spans)
        check("every span has name, cat, ts, dur >= 0, pid, tid, args", well_formed, spans)
        check("span names survive escaping exactly, in order", [e["name"] for e in spans] == EXPECTED_NAMES,
              [e["name"] for e in spans])
        check("timestamps and durations in microseconds, sub-microsecond kept",
              spans[1]["ts"] == 1002.5 and spans[1]["dur"] == 1500.125 and spans[4]["dur"] == 0, spans[1])
        check("args keep strings and numbers",
              spans[2]["args"] == {"path": "/tmp/model.ckpt-100", "bytes": 1.5e9}
              and spans[1]["args"] == {"global_step": 100}, spans[2]["args"])
    return report(checks)


def report(checks):
    print(f"1..{len(checks)}")
    for i, (name, ok, detail) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok and detail != "":
            print(f"# {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
