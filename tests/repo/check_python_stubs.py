#!/usr/bin/env python3
"""Each type stub of the Python package (bindings/python/trainwatch/*.pyi) describes its module as it
is: the same public functions, classes, methods and constants, with the same parameter names (TAP).

usage: check_python_stubs.py PACKAGE_DIR
"""
import ast
import pathlib
import sys


def public(name):
    return not name.startswith("_") or name == "__init__"


def surface(tree):
    """{qualified name: parameter names (None for a constant, field or class)} of a module's public API."""
    names = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and public(node.name):
                a = node.args
                params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
                params += ["*" + a.vararg.arg] if a.vararg else []
                params += ["**" + a.kwarg.arg] if a.kwarg else []
                names[prefix + node.name] = tuple(params)
            elif isinstance(node, ast.ClassDef) and public(node.name):
                names[prefix + node.name] = None
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and public(node.target.id):
                names[prefix + node.target.id] = None
            elif isinstance(node, ast.Assign) and not prefix:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper() and public(target.id):
                        names[target.id] = None
    visit(tree.body, "")
    return names


package = pathlib.Path(sys.argv[1])
stubs = sorted(package.glob("*.pyi"))
print(f"1..{len(stubs) + 1}")
print(f"{'ok' if (package / 'py.typed').is_file() else 'not ok'} 1 - the package has py.typed")
failed = not (package / "py.typed").is_file()
for n, stub in enumerate(stubs, 2):
    module = surface(ast.parse(stub.with_suffix(".py").read_text()))
    typed = surface(ast.parse(stub.read_text()))
    # Instance attributes set in __init__ may be declared in a stub without a counterpart above.
    problems = [f"{name} missing" for name in module if name not in typed]
    problems += [f"{name}{typed[name]} differs from the module's {name}{module[name]}"
                 for name in module if name in typed and typed[name] != module[name]]
    problems += [f"{name} is not in the module" for name, params in typed.items()
                 if name not in module and params is not None]
    if problems:
        failed = True
        print(f"not ok {n} - {stub.name}: " + "; ".join(problems))
    else:
        print(f"ok {n} - {stub.name} matches {stub.with_suffix('.py').name}")
sys.exit(1 if failed else 0)
