#!/usr/bin/env python3
"""Every public function follows the header's signature rules (TAP output).

usage: check_signatures.py INCLUDE_DIR

The rules (docs/DEVELOPING.md, "C API rules"):
- a function returning tw_status is declared TW_NODISCARD;
- out-parameters (named out or out_*) come before every other parameter;
- callbacks (a *_fn or function-pointer parameter, a callback table) and their user_data come last:
  after one, only callbacks, user_data and destroy follow;
- a lookup by name is tw_<object>_get_<what>(out, object, name);
- a query of an opaque object that cannot fail on a valid handle returns its value: a function taking
  only an out-parameter and a const handle returns a tw_status only when its comment names a failure
  other than TW_INVALID_ARGUMENT (the status of a NULL argument);
- a period is an option, never an argument: every periodic hook reads TW_OPT_EVERY_N_STEPS /
  TW_OPT_EVERY_N_SECS from its tw_options, and option keys spell a period *EVERY_N_<unit> (STEPS, SECS,
  HOURS, RUNS).
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
    """(prefix before the name, name, [parameters], the text since the previous declaration) for every
    TW_API function; the last is the function's comment when `text` still has its comments."""
    previous_end = 0
    for match in re.finditer(r"\bTW_API\b", text):
        name = re.compile(r"\b(tw_\w+)\s*\(").search(text, match.end())
        if name is None:
            continue
        open_paren = name.end() - 1
        line_start = text.rfind("\n", 0, match.start()) + 1
        prefix = text[line_start:name.start()]
        end = closing_paren(text, open_paren)
        yield prefix, name.group(1), split_params(text[open_paren + 1:end]), text[previous_end:line_start]
        previous_end = end


def is_callback(param):
    return bool(re.search(r"\b\w+_fn\b|\(\s*\*|_callbacks\b", param))


def check_function(prefix, name, params, comment="", handles=()):
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
    handle = re.fullmatch(r"const\s+(tw_\w+)\s*\*\s*\w+", params[1]) if len(params) == 2 else None
    if (re.search(r"\btw_status\b", prefix) and outs == [0] and handle and handle.group(1) in handles
            and not set(re.findall(r"\bTW_(?!OK\b|INVALID_ARGUMENT\b)[A-Z_]+\b", comment)) - {"TW_UNSET"}):
        problems.append(("query", "an infallible query returns a status instead of its value"))
    # An object that runs periodically (a hook, a session) reads its period from its options; a
    # process-wide setting (tw_set_*) has no options to carry one and takes its interval directly.
    for n in names if not name.startswith("tw_set_") else []:
        if re.search(r"(save|every)_\w*(steps|secs|iter)$", n):
            problems.append(("period", f"period '{n}' is an argument, not TW_OPT_EVERY_N_STEPS / _SECS"))
    return problems


def main():
    include_dir = pathlib.Path(sys.argv[1])
    functions, keys, handles = [], [], set()
    for header in sorted(include_dir.rglob("*.h")):
        raw = header.read_text()
        text = strip_comments(raw)
        # Comments are read from the raw text (a query's documented failures); parameters from the
        # stripped one, so the two lists line up by position.
        comments = [d[3] for d in declarations(raw)]
        functions += [(header.name,) + d[:3] + (comment,) for d, comment in zip(declarations(text), comments)]
        keys += re.findall(r"\b(TW_OPT_\w+)\s*=", text)
        handles |= {n for n in re.findall(r"typedef struct (tw_\w+) (tw_\w+);", text) for n in n[:1]
                    if not re.search(r"struct " + n + r"\s*\{", text)}
    checks = [("the headers declare functions at all", [] if len(functions) > 100 else [len(functions)])]
    rules = {"nodiscard": "every function returning tw_status is TW_NODISCARD",
             "out": "out-parameters come first",
             "callback": "callbacks and their user_data come last",
             "lookup": "lookups by name are tw_<object>_get_<what>(out, object, name)",
             "query": "infallible queries of a handle return the value, not a status",
             "period": "periods are options (TW_OPT_EVERY_N_STEPS / _SECS), not arguments"}
    for rule, title in rules.items():
        failures = [f"{header}: {name}: {message}" for header, prefix, name, params, comment in functions
                    for kind, message in check_function(prefix, name, params, comment, handles) if kind == rule]
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
