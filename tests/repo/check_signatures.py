#!/usr/bin/env python3
"""Every public function follows the header's signature rules (TAP output).

usage: check_signatures.py INCLUDE_DIR

The rules (docs/DEVELOPING.md, "C API rules"):
- a function returning tw_status is declared TW_NODISCARD;
- out-parameters (named out or out_*) come before every other parameter;
- callbacks (a *_fn or function-pointer parameter, a callback table) and their user_data come last:
  after one, only callbacks, user_data and destroy follow;
- a lookup by name is tw_<object>_get_<what>(out, object, name);
- a period is spelled every_n_steps / every_n_secs (arguments) and *EVERY_N_<unit> (option keys:
  STEPS, SECS, HOURS, RUNS).
"""
import pathlib
import re
import sys


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def closing_paren(text, start):
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced parentheses")


def split_params(text):
    params, depth, current = [], 0, ""
    for c in text:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            params.append(current.strip())
            current = ""
        else:
            current += c
    params.append(current.strip())
    return [] if params == ["void"] else params


def param_name(param):
    pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", param)  # void (*destroy)(void *user_data)
    return pointer.group(1) if pointer else re.findall(r"\w+", param)[-1]


def declarations(text):
    """(prefix before the name, name, [parameters]) for every TW_API function."""
    for match in re.finditer(r"\bTW_API\b", text):
        name = re.compile(r"\b(tw_\w+)\s*\(").search(text, match.end())
        if name is None:
            continue
        open_paren = name.end() - 1
        line_start = text.rfind("\n", 0, match.start()) + 1
        prefix = text[line_start:name.start()]
        yield prefix, name.group(1), split_params(text[open_paren + 1:closing_paren(text, open_paren)])


def is_callback(param):
    return bool(re.search(r"\b\w+_fn\b|\(\s*\*|_callbacks\b", param))


def check_function(prefix, name, params):
    problems = []
    names = [param_name(p) for p in params]
    if re.search(r"\btw_status\b", prefix) and "TW_NODISCARD" not in prefix:
        problems.append(("nodiscard", "returns tw_status without TW_NODISCARD"))
    outs = [i for i, n in enumerate(names) if re.fullmatch(r"out(_\w+)?", n)]
    others = [i for i, n in enumerate(names) if i not in outs]
    if outs and others and max(outs) > min(others):
        problems.append(("out", f"out-parameter '{names[max(outs)]}' is not first"))
    callbacks = [i for i, p in enumerate(params) if is_callback(p) or names[i] == "user_data"]
    if callbacks:
        after = [names[i] for i in range(callbacks[0], len(params))
                 if not (is_callback(params[i]) or names[i] in ("user_data", "destroy"))]
        if after:
            problems.append(("callback", f"{after} follow a callback or user_data"))
    if "user_data" in names and any(n != "destroy" for n in names[names.index("user_data") + 1:]):
        problems.append(("callback", "only destroy may follow user_data"))
    if len(names) == 3 and len(outs) == 1 and "name" in names and "_get_" not in name:
        problems.append(("lookup", "a lookup by name is not tw_<object>_get_<what>(out, object, name)"))
    for n in names:
        if re.search(r"(save|every)_\w*(steps|secs|iter)$", n) and n not in ("every_n_steps", "every_n_secs"):
            problems.append(("period", f"period '{n}' is not every_n_steps / every_n_secs"))
    return problems


def main():
    include_dir = pathlib.Path(sys.argv[1])
    functions, keys = [], []
    for header in sorted(include_dir.rglob("*.h")):
        text = strip_comments(header.read_text())
        functions += [(header.name,) + d for d in declarations(text)]
        keys += re.findall(r"\b(TW_OPT_\w+)\s*=", text)
    checks = [("the headers declare functions at all", [] if len(functions) > 100 else [len(functions)])]
    rules = {"nodiscard": "every function returning tw_status is TW_NODISCARD",
             "out": "out-parameters come first",
             "callback": "callbacks and their user_data come last",
             "lookup": "lookups by name are tw_<object>_get_<what>(out, object, name)",
             "period": "periods are every_n_steps / every_n_secs"}
    for rule, title in rules.items():
        failures = [f"{header}: {name}: {message}" for header, prefix, name, params in functions
                    for kind, message in check_function(prefix, name, params) if kind == rule]
        checks.append((title, failures))
    bad_keys = [k for k in keys
                if re.search(r"SAVE_|EVERY|_STEPS$", k) and not re.search(r"EVERY_N_(STEPS|SECS|HOURS|RUNS)$", k)]
    checks.append(("every period option key is spelled *EVERY_N_<STEPS|SECS|HOURS|RUNS>", bad_keys))
    print(f"1..{len(checks)}")
    for i, (title, failures) in enumerate(checks, 1):
        print(f"{'not ok' if failures else 'ok'} {i} - {title}")
        for failure in failures:
            print(f"# {failure}")
    return 1 if any(failures for _, failures in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
