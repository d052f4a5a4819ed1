"""Errors point at the caller: an exception (or a Ctrl-C's KeyboardInterrupt) leaving a public function
or method of the package carries a traceback without the package's own frames, so the last frame of the
caller's code in it is the call that failed (or, for an error raised in the caller's step function or
hook, that line), and the one package frame left is the public entry point that re-raised it.

``expose`` wraps the public callables once, when the package is imported; the modules stay plain.
Set the environment variable TRAINWATCH_FULL_TRACEBACKS=1 to keep every frame (to debug trainwatch).
"""
import functools
import inspect
import os
import types

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# The hook protocol is called by the session's run, which is an entry point already.
_CALLBACKS = frozenset({"begin", "after_create_session", "before_run", "after_run", "end", "on_error",
                        "before_save", "after_save"})


# What a caller sees come out of a call: errors, and a Ctrl-C that arrived while a step or hook ran.
_TRIMMED = (Exception, KeyboardInterrupt)


def _without_trainwatch_frames(error):
    """``error`` with its traceback cut to the frames outside the package's own files."""
    tb = error.__traceback__
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            kept.append(tb)
        tb = tb.tb_next
    trimmed = None
    for entry in reversed(kept):
        trimmed = types.TracebackType(trimmed, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return error.with_traceback(trimmed)


def _entry_point(fn):
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            __tracebackhide__ = True  # noqa: F841 (pytest hides this frame)
            try:
                return (yield from fn(*args, **kwargs))
            except GeneratorExit:
                raise
            except _TRIMMED as error:
                raise _without_trainwatch_frames(error)
        wrapped = generator
    else:
        @functools.wraps(fn)
        def call(*args, **kwargs):
            __tracebackhide__ = True  # noqa: F841 (pytest hides this frame)
            try:
                return fn(*args, **kwargs)
            except _TRIMMED as error:
                raise _without_trainwatch_frames(error)
        wrapped = call
    wrapped._tw_entry_point = True
    return wrapped


_wrappers = {}  # function → its wrapper: a function reached by several names gets one wrapper


def _wrap(fn):
    if getattr(fn, "_tw_entry_point", False):
        return fn
    if fn not in _wrappers:
        _wrappers[fn] = _entry_point(fn)
    return _wrappers[fn]


def _expose_class(cls, done):
    for klass in cls.__mro__:
        if klass in done or not klass.__module__.startswith(__package__ + ".") or issubclass(klass, BaseException):
            continue
        done.add(klass)
        if issubclass(klass, tuple):  # NamedTuples: nothing that fails
            continue
        for name, member in list(vars(klass).items()):
            public = not name.startswith("_") or name in ("__init__", "__enter__", "__exit__")
            if not public or name in _CALLBACKS:
                continue
            if isinstance(member, (staticmethod, classmethod)):
                setattr(klass, name, type(member)(_wrap(member.__func__)))
            elif isinstance(member, property) and member.fget is not None:
                setattr(klass, name, property(_wrap(member.fget), member.fset, member.fdel, member.__doc__))
            elif inspect.isfunction(member):
                setattr(klass, name, _wrap(member))


def expose(*modules):
    """Wraps the public functions and classes (``__all__``) of ``modules``, each object once; a module
    attribute naming a wrapped function is rebound to the wrapper."""
    if os.environ.get("TRAINWATCH_FULL_TRACEBACKS", "") not in ("", "0"):
        return
    done = set()
    for module in modules:
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value):
                _expose_class(value, done)
            elif inspect.isfunction(value) and value.__module__.startswith(__package__ + "."):
                setattr(module, name, _wrap(value))
