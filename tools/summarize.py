#!/usr/bin/env python3
"""Totals test cases over every suite and prints one line: "N passed, N failed".

Arguments are meson testlog.json files (each TAP-speaking test contributes one case per "ok"/"not ok"
line; any other test counts as one case by its result) and extra totals as "name=PASSED:FAILED" from
suites run outside meson (pytest, Java, …). `summarize.py --junit REPORT` prints PASSED:FAILED of a
pytest --junitxml report. A skipped case counts as neither passed nor failed.
"""
import json
import re
import sys

TAP_LINE = re.compile(r"^(not ok|ok)\b(.*)$", re.M)


def tally_meson_log(path):
    passed = failed = skipped = 0
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            test = json.loads(line)
            result = test.get("result", "")
            cases = TAP_LINE.findall(test.get("stdout") or "")
            if cases:
                for verdict, rest in cases:
                    if "# SKIP" in rest.upper():
                        skipped += 1
                    elif verdict == "ok":
                        passed += 1
                    else:
                        failed += 1
                # A crash after some cases passed must still count as a failure.
                if result not in ("OK", "SKIP") and not any(v == "not ok" for v, _ in cases):
                    failed += 1
            elif result == "SKIP":
                skipped += 1
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            else:
                failed += 1
    return passed, failed, skipped


def tally_junit(path):
    """PASSED:FAILED of a pytest --junitxml report; a missing report or no test at all is a failure
    (pytest's exit code 5 must not pass silently)."""
    import xml.etree.ElementTree as ElementTree
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return "0:1"
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    if total == 0:
        return "0:1"
    return f"{total - failed - skipped}:{failed}"


def main(argv):
    if argv[:1] == ["--junit"]:
        print(tally_junit(argv[1]))
        return 0
    total_passed = total_failed = total_skipped = 0
    for arg in argv:
        if "=" in arg:
            name, counts = arg.split("=", 1)
            passed, failed = (int(x) for x in counts.split(":"))
            skipped = 0
        else:
            name = arg
            passed, failed, skipped = tally_meson_log(arg)
        print(f"  {name}: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
        total_passed += passed
        total_failed += failed
        total_skipped += skipped
    line = f"{total_passed} passed, {total_failed} failed"
    if total_skipped:
        line += f", {total_skipped} skipped"
    print(line)
    return 0 if total_failed == 0 and total_passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
