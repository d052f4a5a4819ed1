"""Fetches: names in any nesting, flattened into the names to read, values rebuilt in their shape.

A fetch is a name, or a list, tuple (named tuples included) or dict of fetches, to any depth (H20). A
name with '*', '?' or '[' is a glob pattern: its result is a dict of every matching name → value.
Values come back as tf.Session.run returns them (numpy copies; numpy scalars for 0-d values). Two
sources answer names: a hook's results in after_run (RunResults), and a session read without running
a step (SessionValues: TF's ``session.run(global_step_tensor)``).
"""
from fnmatch import fnmatchcase

import numpy as np

from .errors import FailedPreconditionError, NotFoundError
from .tensors import to_value

_PATTERN_CHARACTERS = frozenset("*?[")

RUN_ACCEPTS = ("run() accepts a step function (a callable taking a StepContext) or fetches: a name (str) of a "
               "registered variable, a published output or 'global_step', or lists, tuples and dicts of names")


def is_pattern(name):
    return not _PATTERN_CHARACTERS.isdisjoint(name)


def is_fetches(value):
    """Whether ``value`` has the shape of fetches (names in lists, tuples and dicts)."""
    if isinstance(value, str):
        return True
    if isinstance(value, dict):
        return all(is_fetches(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(is_fetches(v) for v in value)
    return False


class FetchPlan:
    """The names of one set of fetches, and how to put their values back together."""

    def __init__(self, fetches):
        self.names = []
        self.values = {}  # name → value of the last results(), patterns' matches included
        self._index = {}
        self._structure = self._flatten(fetches)

    def request(self, run_context):
        for name in self.names:
            run_context.request_fetch(name)

    def results(self, source):
        """The values ``source`` (RunResults or SessionValues) gives, in the structure of the fetches."""
        values = [source.matching(name) if is_pattern(name) else source.value(name) for name in self.names]
        self.values = {}
        for name, value in zip(self.names, values):
            if is_pattern(name):
                self.values.update(value)
            else:
                self.values[name] = value
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


class RunResults:
    """A hook's results in after_run (native RunContext)."""

    def __init__(self, run_context):
        self._ctx = run_context

    def value(self, name):
        return to_value(self._ctx.result(name))

    def matching(self, pattern):
        return {t.name(): to_value(t) for t in self._ctx.results() if fnmatchcase(t.name(), pattern)}


# B10: what end() reads of the outputs.
class SessionValues:
    """Values read from a session without running a step (native SessionRef): a published output of the
    run in progress, a registered variable, or global_step (its current value). In hooks' end(),
    ``last_run`` (name → value) holds what hooks fetched in the last run: TF evaluated an output once
    more there, a step cannot run again, so the last run's value stands in for it."""

    def __init__(self, session_ref, last_run=None):
        self._session = session_ref
        self._last_run = last_run

    def value(self, name):
        try:
            return to_value(self._session.output(name))
        except (NotFoundError, FailedPreconditionError):  # not an output, or no run in progress
            pass
        try:
            return to_value(self._session.variable(name))
        except NotFoundError:
            pass
        if name == "global_step":
            return np.int64(self._session.global_step())
        if self._last_run is not None and name in self._last_run:  # after them: they read as of now
            return self._last_run[name]
        if self._last_run is not None:
            raise NotFoundError(None, None, f"'{name}' is neither a registered variable, nor an output a hook fetched "
                                            f"in the last run (what end() can read of the outputs), nor 'global_step'")
        raise NotFoundError(None, None, f"'{name}' is neither a registered variable, nor an output published in "
                                        f"the run in progress, nor 'global_step'")

    def matching(self, pattern):  # outputs cannot be enumerated from a session: variables only
        return {t.name(): to_value(t) for t in self._session.variables() if fnmatchcase(t.name(), pattern)}


def read(session_ref, fetches, feed_dict=None, last_run=None):
    """TF's ``session.run(fetches)`` for names: their values now, without running a step or hooks
    (``last_run``: see SessionValues)."""
    if not is_fetches(fetches):
        raise TypeError(f"{RUN_ACCEPTS}; got {type(fetches).__name__}")
    if feed_dict:
        raise ValueError("feed_dict has no effect when run() reads values by name; feeds go to a step function")
    return FetchPlan(fetches).results(SessionValues(session_ref, last_run))
