"""Every C# callback kind, declared once: the table below, and what meson generates from it.

C# never overrides a facade callback class directly (a managed exception must not unwind through
native frames): it overrides a Managed* class whose callbacks return false instead of throwing
(managed_error.hpp says how the failure travels). Each row of KINDS gives one such class: its name,
the facade class it implements, the constructor's parameters (passed on to the facade class), the
accessors that hand the facade object to the facade's API, and the facade's callbacks. A callback
returning a value gets it back from C# through a setter (Result); one that cannot fail drops what C#
throws (NoFail).

usage: managed_callbacks.py HPP_OUT I_OUT
  HPP_OUT  the C++ classes (the SWIG wrapper includes them)
  I_OUT    what SWIG sees: the facade classes' directors off, the Managed* ones on, and the Managed*
           classes without their facade bases (whose callbacks are final there)
The hand-written C# over these classes (a delegate or abstract class and the director subclass that
calls it) is in bindings/csharp/src.
"""
import re
import sys
from typing import List, NamedTuple, Union


class Result(NamedTuple):
    callback: str  # the facade's virtual, as declared there
    setter: str  # what C# calls with the value before returning true; a vector's setter appends


class NoFail(NamedTuple):
    callback: str


Callback = Union[str, Result, NoFail]


class Kind(NamedTuple):
    name: str
    base: str
    accessors: List[str]
    callbacks: List[Callback]
    ctor: str = ""


HOOK_CALLBACKS: List[Callback] = [
    "void begin(SessionRef &session)",
    "void after_create_session(SessionRef &session)",
    "void before_run(RunContext &ctx)",
    "void after_run(RunContext &ctx)",
    "void end(SessionRef &session)",
    NoFail("void on_error(SessionRef &session, int error)"),
]

KINDS = [
    Kind("ManagedHook", "Hook", ["HookHandle *hook"], HOOK_CALLBACKS, ctor="const std::string &name"),
    # A C# subclass of a built-in hook: `overridden` is a mask of WrappedHook::Overrides; the rest stay
    # the built-in's, run natively. C# reaches the super() calls through wrapped().
    Kind("ManagedWrappedHook", "WrappedHook", ["HookHandle *hook", "WrappedHook *wrapped"], HOOK_CALLBACKS + [
        "void log_tensors(const std::vector<Tensor> &values)",
        "void log_and_record(int64_t elapsed_steps, double elapsed_time, int64_t global_step)",
        Result("bool save(SessionRef &session, int64_t step)", "void set_stop(bool stop)"),
    ], ctor="const HookHandle &inner, int overridden"),
    Kind("ManagedStep", "StepFunction", ["StepFunction &step"], ["void run(StepContext &ctx)"]),
    Kind("ManagedListener", "CheckpointSaverListener", ["CheckpointSaverListener *listener"], [
        "void begin()",
        "void before_save(SessionRef &session, int64_t global_step)",
        Result("bool after_save(SessionRef &session, int64_t global_step)", "void set_stop(bool stop)"),
        "void end(SessionRef &session, int64_t global_step)",
    ], ctor="const std::string &name"),
    Kind("ManagedNanFunction", "NanFunction", ["NanFunction *function"],
         ["void on_nan(SessionRef &session, const NanEvent &event)"]),
    Kind("ManagedInitFunction", "InitFunction", ["InitFunction *function"], ["void run(SessionRef &session)"]),
    Kind("ManagedReadyFunction", "ReadyFunction", ["ReadyFunction *function"],
         [Result("bool ready(SessionRef &session)", "void set_ready(bool ready)")]),
    Kind("ManagedLogFormatter", "LogFormatter", ["LogFormatter *formatter"],
         [Result("std::string format(const std::vector<Tensor> &values)", "void set_text(const std::string &text)")]),
    Kind("ManagedFeedFunction", "FeedFunction", ["FeedFunction *function"],
         [Result("std::vector<Tensor> feeds()", "void add_feed(const Tensor &feed)")]),
    Kind("ManagedGlobalStepFunction", "GlobalStepFunction", ["GlobalStepFunction *function"],
         [Result("int64_t global_step(SessionRef &session)", "void set_global_step(int64_t step)")]),
    Kind("ManagedLogSink", "LogSink", ["LogSink *sink"], [NoFail("void write(int level, const std::string &message)")]),
    Kind("ManagedProgressSink", "ProgressSink", ["ProgressSink *sink"], [NoFail(
        "void report(int kind, const std::string &path, int64_t bytes_done, int64_t bytes_total, double elapsed_secs, "
        "bool finished)")]),
]

# ------------------------------------------------------------------------------------------------
# Generation
# ------------------------------------------------------------------------------------------------

DECLARATION = re.compile(r"^(?P<type>.+?)\s*\b(?P<name>\w+)\((?P<params>.*)\)$")


class Signature(NamedTuple):
    type: str
    name: str
    params: str

    @property
    def args(self) -> str:
        return args_of(self.params)


def args_of(params: str) -> str:
    """The arguments that pass a parameter list on: its names."""
    return ", ".join(re.findall(r"(\w+)\s*(?:,|$)", params))


def parse(declaration: str) -> Signature:
    match = DECLARATION.match(declaration)
    if match is None:
        raise SystemExit(f"managed_callbacks.py: cannot read '{declaration}'")
    return Signature(match["type"], match["name"], match["params"])


def qualified(text: str) -> str:
    """Facade types (capitalised) with their namespace, as SWIG's view declares them outside it."""
    return re.sub(r"(?<![:\w])([A-Z]\w*)", r"trainwatch::\1", text)


def facade_types() -> List[str]:
    found = set()
    for kind in KINDS:
        found.add(kind.base)
        texts = [kind.ctor, *kind.accessors]
        for callback in kind.callbacks:
            texts.append(callback if isinstance(callback, str) else callback.callback)
        for text in texts:
            found.update(re.findall(r"(?<![:\w])([A-Z]\w*)", text))
    return sorted(found)


def accessor_cpp(accessor: str) -> str:
    signature = parse(accessor + "()")
    value = "*this" if signature.type.endswith("&") else "this"
    return f"  {accessor}() noexcept {{ return {value}; }}"


def kind_cpp(kind: Kind) -> str:
    lines = [f"class {kind.name} : public {kind.base} {{", " public:"]
    if kind.ctor:
        explicit = "explicit " if "," not in kind.ctor else ""
        lines.append(f"  {explicit}{kind.name}({kind.ctor}) : {kind.base}({args_of(kind.ctor)}) {{}}")
    lines += [accessor_cpp(a) for a in kind.accessors]
    overrides, members = [], []
    for callback in kind.callbacks:
        if isinstance(callback, Result):
            signature, setter = parse(callback.callback), parse(callback.setter)
            result = f"{signature.name}_result_"
            store = "push_back" if signature.type.startswith("std::vector") else None
            value = setter.args
            body = f"{result}.push_back({value});" if store else f"{result} = {value};"
            lines.append(f"  {setter.type} {setter.name}({setter.params}) {{ {body} }}")
            members.append(f"  {signature.type} {result}{{}};")
            overrides += [
                f"  {signature.type} {signature.name}({signature.params}) final {{",
                f"    {result} = {signature.type}();",
                f"    detail::check(managed_{signature.name}({signature.args}));",
                f"    return std::move({result});",
                "  }",
            ]
        elif isinstance(callback, NoFail):
            signature = parse(callback.callback)
            overrides.append(f"  void {signature.name}({signature.params}) final "
                             f"{{ managed_{signature.name}({signature.args}); }}")
        else:
            signature = parse(callback)
            overrides.append(f"  void {signature.name}({signature.params}) final "
                             f"{{ detail::check(managed_{signature.name}({signature.args})); }}")
    for callback in kind.callbacks:
        signature = parse(callback if isinstance(callback, str) else callback.callback)
        returns = "void" if isinstance(callback, NoFail) else "bool"
        lines.append(f"  virtual {returns} managed_{signature.name}({signature.params}) = 0;")
    lines += ["", " private:", *overrides]
    if members:
        lines += ["", *members]
    lines.append("};")
    return "\n".join(lines)


def kind_swig(kind: Kind) -> str:
    lines = [f"class {kind.name} {{", " public:"]
    lines.append(f"  {'explicit ' if kind.ctor and ',' not in kind.ctor else ''}{kind.name}({qualified(kind.ctor)});")
    lines.append(f"  virtual ~{kind.name}();")
    for accessor in kind.accessors:
        lines.append(f"  {qualified(accessor)}();")
    for callback in kind.callbacks:
        if isinstance(callback, Result):
            lines.append(f"  {qualified(callback.setter)};")
    for callback in kind.callbacks:
        signature = parse(callback if isinstance(callback, str) else callback.callback)
        returns = "void" if isinstance(callback, NoFail) else "bool"
        lines.append(f"  virtual {returns} managed_{signature.name}({qualified(signature.params)}) = 0;")
    lines.append("};")
    return "\n".join(lines)


HEADER = "// Generated by bindings/swig/csharp/managed_callbacks.py from its table of C# callback kinds.\n"


def write_hpp(path: str) -> None:
    body = "\n\n".join(kind_cpp(kind) for kind in KINDS)
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"""{HEADER}#ifndef TRAINWATCH_CSHARP_MANAGED_CALLBACKS_HPP
#define TRAINWATCH_CSHARP_MANAGED_CALLBACKS_HPP

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "csharp/managed_error.hpp"

namespace trainwatch {{
namespace csharp {{

{body}

}}  // namespace csharp
}}  // namespace trainwatch

#endif  // TRAINWATCH_CSHARP_MANAGED_CALLBACKS_HPP
""")


def write_swig(path: str) -> None:
    off = "\n".join(f'%feature("director", "0") trainwatch::{kind.base};' for kind in KINDS)
    on = "\n".join(f'%feature("director") trainwatch::csharp::{kind.name};' for kind in KINDS)
    forward = "\n".join(f"class {name};" for name in facade_types())
    views = "\n\n".join(kind_swig(kind) for kind in KINDS)
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"""{HEADER}{off}

{on}

namespace trainwatch {{
{forward}
namespace csharp {{

{views}

}}  // namespace csharp
}}  // namespace trainwatch
""")


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    write_hpp(argv[1])
    write_swig(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
