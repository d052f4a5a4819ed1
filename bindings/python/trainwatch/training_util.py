"""tf.train's global-step functions (H31).

A trainwatch session always has its global step (an int64 the library keeps, checkpoints and restores),
so there is nothing to create: each function returns the one handle that names it. The handle is the
string "global_step" — so it is accepted wherever a name is (``session.run``, ``SessionRunArgs``, hook
constructors) and compares and hashes like the name — with the attributes TF1 code reads from its
global-step tensor: ``.name``, ``.op.name``, ``.dtype``.
"""
from typing import NamedTuple

import numpy as np

GLOBAL_STEP_NAME = "global_step"


class _Operation(NamedTuple):
    """What ``global_step.op`` offers: the name TF code builds tags from (``op.name + "/sec"``)."""

    name: str


class GlobalStep(str):
    """The global step's handle: the name "global_step", with TF's tensor attributes."""

    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, GLOBAL_STEP_NAME)

    @property
    def name(self):
        return str(self)

    @property
    def op(self):
        return _Operation(str(self))

    @property
    def dtype(self):
        return np.dtype(np.int64)

    @property
    def graph(self):  # there is no graph; TF code compares it only with other tensors' graphs
        return None

    def eval(self, session):
        """TF's ``tensor.eval(session=...)``: the global step's value now, read from ``session``."""
        return session.run(self)

    def __repr__(self):
        return "<trainwatch global_step: int64>"

    def __reduce__(self):
        return (GlobalStep, ())


_GLOBAL_STEP = GlobalStep()


def get_global_step(graph=None):
    """Returns the global step's handle (TF returns its tensor, or None without one: trainwatch
    sessions always have one). ``graph`` is accepted for TF compatibility and ignored."""
    del graph
    return _GLOBAL_STEP


def get_or_create_global_step(graph=None):
    """Returns the global step's handle, as get_global_step (there is nothing to create)."""
    return get_global_step(graph)


def create_global_step(graph=None):
    """Returns the global step's handle, as get_global_step: every session has its global step, so
    TF's "global step already exists" error cannot happen."""
    return get_global_step(graph)


def global_step(sess, global_step_tensor):
    """TF's ``tf.train.global_step(sess, global_step_tensor)``: the global step's value as an int."""
    return int(sess.run(global_step_tensor))
