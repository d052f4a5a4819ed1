"""Checks a ProfilerHook timeline with Python's own JSON parser (an independent decoder).

usage: check_timeline.py <timeline.json> <expected span name>...
Exit 0 when the file is a Chrome trace whose complete ("X") events are exactly the expected names in
that order, each inside the "run" span, all on one pid/tid named by metadata events; prints why not.
"""
import json
import sys


def main(path, expected):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    names = [e["name"] for e in spans]
    if names != ["run"] + expected:
        return f"span names {names} != {['run'] + expected}"
    meta = {e["name"] for e in events if e["ph"] == "M"}
    if not {"process_name", "thread_name"} <= meta:
        return f"metadata events missing: {meta}"
    run = spans[0]
    if run["cat"] != "run" or run["ts"] != 0:
        return f"run span {run}"
    end = run["ts"] + run["dur"]
    previous = 0
    for span in spans[1:]:
        if span["pid"] != run["pid"] or span["tid"] != run["tid"]:
            return f"span {span['name']} on another pid/tid"
        if span["dur"] < 0 or span["ts"] < previous or span["ts"] + span["dur"] > end + 0.001:
            return f"span {span['name']} at {span['ts']}+{span['dur']} outside the run or out of order"
        if span["cat"] not in ("before_run", "step", "after_run"):
            return f"span {span['name']} has category {span['cat']}"
        if not isinstance(span["args"]["global_step"], (int, float)):
            return f"span {span['name']} has no global_step arg"
        previous = span["ts"] + span["dur"]
    return None


if __name__ == "__main__":
    error = main(sys.argv[1], sys.argv[2:])
    if error:
        print(error)
        sys.exit(1)
