"""SessionRunArgs.fetches: flattened into the names a hook requests, results rebuilt in their shape.

A fetch is a name, or a list, tuple (named tuples included) or dict of fetches, to any depth (H20). A
name with '*', '?' or '[' is a glob pattern: its result is a dict of every matching name → value.
"""
from fnmatch import fnmatchcase

from . import native

_PATTERN_CHARACTERS = frozenset("*?[")


def _is_pattern(name):
    return not _PATTERN_CHARACTERS.isdisjoint(name)


class FetchPlan:
    """The names of one SessionRunArgs.fetches, and how to put their values back together."""

    def __init__(self, fetches):
        self.names = []
        self._index = {}
        self._structure = self._flatten(fetches)

    def request(self, run_context):
        for name in self.names:
            run_context.request_fetch(name)

    def results(self, run_context):
        """The values of this run (numpy copies) in the structure of the fetches."""
        values = [self._value(run_context, name) for name in self.names]
        return self._rebuild(self._structure, values)

    def _flatten(self, fetches):
        if isinstance(fetches, str):
            if not fetches:
                raise ValueError("a fetch name must not be empty")
            return self._index[fetches] if fetches in self._index else self._add(fetches)
        if isinstance(fetches, dict):
            return type(fetches), {key: self._flatten(value) for key, value in fetches.items()}
        if isinstance(fetches, (list, tuple)):
            return type(fetches), [self._flatten(value) for value in fetches]
        raise TypeError(f"fetches must be names (str) in lists, tuples or dicts; got {type(fetches).__name__}")

    def _add(self, name):
        self._index[name] = len(self.names)
        self.names.append(name)
        return self._index[name]

    @staticmethod
    def _value(run_context, name):
        if _is_pattern(name):
            return {t.name(): native.to_numpy(t) for t in run_context.results() if fnmatchcase(t.name(), name)}
        return native.to_numpy(run_context.result(name))

    def _rebuild(self, structure, values):
        if isinstance(structure, int):
            return values[structure]
        kind, children = structure
        if issubclass(kind, dict):
            return kind((key, self._rebuild(child, values)) for key, child in children.items())
        items = [self._rebuild(child, values) for child in children]
        if issubclass(kind, tuple) and hasattr(kind, "_fields"):
            return kind(*items)
        return kind(items)
