"""The built-in hooks of tf.train, each backed by the library's own implementation (no Python in the
run loop), plus CheckpointSaverListener and SecondOrStepTimer.

Signatures and defaults are TF's; trainwatch's additions are keyword-only. Each hook also has TF's
private attributes (``_timer``, ``_current_tensors``, ``_last_step``, …) with TF's meaning, for the
subclasses that use them (H33): LoggingTensorHook, StepCounterHook, StopAtStepHook, NanTensorHook,
GlobalStepWaiterHook, SummarySaverHook, ProfilerHook and FinalOpsHook then run TF's own callbacks in
Python over those attributes, so what a subclass writes takes effect as in TF; these, and FeedFnHook,
can also be driven by hand (``hook.before_run(SessionRunContext(...))``), as TF's hook tests do.
"""
import logging
import os
import shutil
import time
import types
import weakref
from fnmatch import fnmatchcase

import numpy as np

from . import _paths, native
from ._raw_session import owner_of
from ._step import StepRunner, remember_fed
from ._fetches import FetchPlan, RunResults, is_fetches, is_pattern
from .devices import to_host
from ._hook_adapter import CALLBACKS, WrapperAdapter
from .errors import NanLossDuringTrainingError, NotFoundError, OutOfRangeError
from .session_run_hook import SessionRunArgs, SessionRunHook
from .summary import FileWriter, FileWriterCache, SessionLog, Summary
from .tensors import to_value
from .training_util import get_global_step

_logger = logging.getLogger("trainwatch")

_UNSET = native.UNSET
_UNSET_SECS = -1.0
_EVERY_VALUE = "*"  # the request for every published value


def _steps(value):
    return _UNSET if value is None else int(value)


def _secs(value):
    return _UNSET_SECS if value is None else float(value)


def _timer_options(every_steps, every_secs):
    """TW_OPT_EVERY_N_STEPS / _SECS for the hooks that take an options object."""
    options = native.Options()
    if every_steps is not None:
        options.set_int64(native.TW_OPT_EVERY_N_STEPS, int(every_steps))
    if every_secs is not None:
        options.set_double(native.TW_OPT_EVERY_N_SECS, float(every_secs))
    return options


def _histogram_names(names, argument):
    """TW_OPT_SUMMARY_HISTOGRAM_NAMES for a name, a list of names or glob patterns (B49), or None."""
    if names is None:
        return None
    names = [names] if isinstance(names, str) else list(names)
    for name in names:
        if not isinstance(name, str) or not name or "," in name:
            raise ValueError(f"{argument} takes non-empty names or patterns without ','; got {name!r}")
    return ",".join(names)


def _writer(summary_writer):
    """The native writer of a trainwatch.summary.FileWriter (TF passes its FileWriter), or None."""
    if isinstance(summary_writer, FileWriter):
        return summary_writer._native
    if summary_writer is not None and not isinstance(summary_writer, native.SummaryWriter):
        raise TypeError(f"summary_writer must be a trainwatch.summary.FileWriter; got {type(summary_writer).__name__}")
    return summary_writer


class NativeHook(SessionRunHook):
    """A hook implemented by the library. Sessions hand ``_native`` to the library directly, unless a
    subclass overrides callbacks or extension points (TF's way to customise a built-in hook): then a
    wrapper runs the overrides in Python and the rest natively, and the methods below — what
    ``super()`` reaches — run the native hook's own callback of the same kind.

    A hook with TF's callbacks in Python (``_TF_CODE``: its ``_tf_*`` methods) runs them instead — every
    callback in Python — when a subclass's code uses one of TF's private attributes (``_TF_STATE``) or
    the object's were replaced, and when it is driven by hand outside a session (H33)."""

    _native = None
    _tw_call = None          # (callback, wrapper, its session/run context) while a wrapper callback runs
    _tw_fed = frozenset()    # the feed names the built-in's before_run added in this call
    _tw_python = False       # whether the session runs TF's callbacks in Python (H33)
    _EXTENSION_POINTS = ()   # TF's protected methods of this hook that a subclass may override
    _TF_STATE = ()           # TF's private attributes of this hook, set by TF's __init__ or begin
    _TF_CODE = False         # whether this hook has TF's callbacks in Python (the _tf_* methods)

    def _handle_for(self, owner):
        """What ``owner``'s session lists: the native hook, or a wrapper running the overrides."""
        overrides = self._python_callbacks(owner)
        self._tw_python = self._TF_CODE and (self._subclass_uses_tf_state() or self._tf_state_replaced())
        if self._tw_python:
            return WrapperAdapter(self, owner, _TF_CALLBACKS)
        if "after_run" in overrides:  # its run_values come from the fetches of a Python before_run
            overrides.add("before_run")
        return WrapperAdapter(self, owner, overrides) if overrides else self._native

    def _builtin_class(self):
        return next(c for c in type(self).__mro__ if c.__module__ == __name__)

    def _python_callbacks(self, owner):
        """What the subclass overrides, compared with the built-in class it derives from."""
        del owner
        cls = type(self)
        builtin = self._builtin_class()
        return {name for name in CALLBACKS + self._EXTENSION_POINTS
                if getattr(cls, name) is not getattr(builtin, name)}

    def _subclass_uses_tf_state(self):
        """Whether code the subclass defines (its mixins' too) reads or writes one of TF's private attributes."""
        used = set()
        for cls in type(self).__mro__:
            if cls is not object and not cls.__module__.startswith(_PACKAGE):
                for member in vars(cls).values():
                    used.update(_attribute_names(member))
        return not used.isdisjoint(self._TF_STATE)

    def _remember_tf_state(self):
        """Called at the end of __init__: what TF's attributes hold, to see later writes from outside."""
        self._tw_initial = {name: _shallow_copy(getattr(self, name)) for name in self._TF_STATE if hasattr(self, name)}

    def _tf_state_replaced(self):
        initial = getattr(self, "_tw_initial", {})
        return any(not _same(getattr(self, name, None), value) for name, value in initial.items())

    def _native_call(self, callback):
        """(wrapper, session or run context) when ``callback`` is to run the native hook's own: inside the
        session's call of it, unless the session runs TF's callbacks in Python. None: run TF's code."""
        call = self._tw_call
        if call is not None and call[0] == callback and not self._tw_python:
            return call[1], call[2]
        if self._TF_CODE and (call is None or self._tw_python):
            return None
        raise self._not_by_hand(callback)

    def _not_by_hand(self, callback):
        return RuntimeError(f"{type(self).__name__}.{callback}: the built-in {callback} runs only inside the "
                            f"session's call of {callback} (super().{callback}(...) in an override); "
                            f"{self._builtin_class().__name__} cannot be driven by hand: the library runs it")

    def begin(self):
        call = self._native_call("begin")
        if call is None:
            return self._tf_begin()
        wrapper, session = call
        wrapper.super_begin(session)

    def after_create_session(self, session, coord):
        call = self._native_call("after_create_session")
        if call is None:
            return self._tf_after_create_session(session, coord)
        wrapper, session = call
        wrapper.super_after_create_session(session)

    def before_run(self, run_context):
        """Runs the built-in's before_run and returns what it requested, as TF's SessionRunArgs."""
        call = self._native_call("before_run")
        if call is None:
            return self._tf_before_run(run_context)
        wrapper, ctx = call
        already = len(ctx.requests())
        wrapper.super_before_run(ctx)
        _take_stop(run_context, ctx)
        args = self._run_args(ctx.requests()[already:])
        self._tw_fed = frozenset(args.feed_dict) if args is not None and args.feed_dict else frozenset()
        return args

    def after_run(self, run_context, run_values):
        """Runs the built-in's after_run: its check, logging or saving, and its stop request."""
        call = self._native_call("after_run")
        if call is None:
            return self._tf_after_run(run_context, run_values)
        wrapper, ctx = call
        wrapper.super_after_run(ctx)
        _take_stop(run_context, ctx)

    def end(self, session):
        call = self._native_call("end")
        if call is None:
            return self._tf_end(session)
        wrapper, session = call
        wrapper.super_end(session)

    def on_error(self, session, error_code):
        call = self._native_call("on_error")
        if call is None:
            return None
        wrapper, session = call
        wrapper.super_on_error(session, error_code)

    # TF's callbacks in Python (hooks with _TF_CODE override what they have; the rest are TF's no-ops).
    def _tf_begin(self):
        pass

    def _tf_after_create_session(self, session, coord):
        pass

    def _tf_before_run(self, run_context):
        return None

    def _tf_after_run(self, run_context, run_values):
        pass

    def _tf_end(self, session):
        pass

    def _run_args(self, requested):
        """TF's SessionRunArgs for the names the built-in requested in this run."""
        return SessionRunArgs(list(requested)) if requested else None


_TF_CALLBACKS = ("begin", "after_create_session", "before_run", "after_run", "end")
_PACKAGE = __name__.rpartition(".")[0] + "."  # "trainwatch."


def _attribute_names(member):
    """The attribute names the code of a class member uses (functions, properties, nested code)."""
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    if isinstance(member, property):
        return set().union(*(_attribute_names(f) for f in (member.fget, member.fset, member.fdel) if f))
    code = getattr(member, "__code__", None)
    return _code_names(code) if code is not None else set()


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _shallow_copy(value):
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


def _same(now, initial):
    """Whether an attribute still holds what __init__ gave it (containers by content, the rest by identity)."""
    if isinstance(initial, (dict, list)):
        return type(now) is type(initial) and now == initial
    return now is initial


def _timer_or_none(every_secs, every_steps):
    """TF's SecondOrStepTimer for hooks whose native timer it describes (None where TF would raise)."""
    if (every_secs is None) == (every_steps is None):
        return None
    return SecondOrStepTimer(every_secs=every_secs, every_steps=every_steps)


def _take_stop(run_context, ctx):
    """A stop the built-in requested shows in the SessionRunContext the subclass holds."""
    if run_context is not None and ctx.stop_requested():
        run_context._stop_requested = True


class _GlobalStepArgs:
    """TF's hooks that fetch the global step on every run (SessionRunArgs(global_step_tensor))."""

    def _run_args(self, requested):
        del requested
        return SessionRunArgs("global_step")


# B11–B15
class StopAtStepHook(_GlobalStepArgs, NativeHook):
    """Hook that requests stop at a specified step."""

    _TF_STATE = ("_num_steps", "_last_step", "_global_step_tensor")
    _TF_CODE = True

    def __init__(self, num_steps=None, last_step=None):
        """Initializes a ``StopAtStepHook``: the run that brings the global step to the last step
        requests a stop. Give exactly one of the two arguments.

        Args:
          num_steps: number of steps to run after the session starts (its global step when created).
          last_step: the global step after which to stop.

        Raises:
          ValueError: both or neither are given.
        """
        self._native = native.StopAtStepHook(_steps(num_steps), _steps(last_step))
        self._num_steps = num_steps
        self._last_step = last_step
        self._global_step_tensor = get_global_step()  # TF sets it in begin(): known already here
        self._remember_tf_state()

    def _tf_begin(self):
        self._global_step_tensor = get_global_step()

    def _tf_after_create_session(self, session, coord):
        if self._last_step is None:  # B13: once, so a recovery does not move the target
            self._last_step = session.run(self._global_step_tensor) + self._num_steps

    def _tf_before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _tf_after_run(self, run_context, run_values):
        if run_values.results + 1 >= self._last_step:  # B14: then the step after the run decides
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


# B17
class CheckpointSaverListener:
    """Interface for listeners that take action before or after a checkpoint save; every method does
    nothing by default. ``after_save`` may return True to stop training."""

    def begin(self):
        """Called once, when the CheckpointSaverHook's session begins."""

    def before_save(self, session, global_step_value):
        """Called before each save.

        Args:
          session: the session (a ``RawSession``: reads values, runs steps without hooks).
          global_step_value: the global step of the checkpoint about to be saved.
        """

    def after_save(self, session, global_step_value):
        """Called after each save.

        Args:
          session: the session (a ``RawSession``).
          global_step_value: the global step of the checkpoint just saved.

        Returns:
          True to request that training stop; None or False otherwise.
        """

    def end(self, session, global_step_value):
        """Called at the end of the session, after the last save.

        Args:
          session: the session (a ``RawSession``).
          global_step_value: the global step of the last checkpoint.
        """


class _ListenerAdapter(native.CheckpointSaverListener):
    """A Python CheckpointSaverListener in the library (a SWIG director)."""

    def __init__(self, listener):
        super().__init__(type(listener).__name__)
        self._listener = listener

    def begin(self):
        self._listener.begin()

    def before_save(self, session_ref, global_step):
        self._listener.before_save(owner_of(session_ref).raw_session(session_ref), global_step)

    def after_save(self, session_ref, global_step):
        stop = self._listener.after_save(owner_of(session_ref).raw_session(session_ref), global_step)
        if stop:
            logging.getLogger("trainwatch").info(
                "A CheckpointSaverListener requested that training be stopped. listener: %s", self._listener)
        return bool(stop)

    def end(self, session_ref, global_step):
        self._listener.end(owner_of(session_ref).raw_session(session_ref), global_step)


class _HookListeners(native.CheckpointSaverListener):
    """The listeners of a CheckpointSaverHook whose TF callbacks run in Python: whatever its
    ``_listeners`` holds when the library calls them (a list a subclass may change, as in TF)."""

    def __init__(self, hook):
        super().__init__(type(hook).__name__ + "._listeners")
        self._hook = hook

    def begin(self):
        for listener in list(self._hook._listeners):
            listener.begin()

    def before_save(self, session_ref, global_step):
        session = owner_of(session_ref).raw_session(session_ref)
        for listener in list(self._hook._listeners):
            listener.before_save(session, global_step)

    def after_save(self, session_ref, global_step):
        session = owner_of(session_ref).raw_session(session_ref)
        stop = False
        for listener in list(self._hook._listeners):
            if listener.after_save(session, global_step):
                logging.getLogger("trainwatch").info(
                    "A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                stop = True
        return stop

    def end(self, session_ref, global_step):
        session = owner_of(session_ref).raw_session(session_ref)
        for listener in list(self._hook._listeners):
            listener.end(session, global_step)


# B18–B24; with listeners the saving run waits for the write, so a listener's stop ends that run (B22).
class CheckpointSaverHook(_GlobalStepArgs, NativeHook):
    """Saves ``<checkpoint_dir>/<checkpoint_basename>-<global_step>`` at session creation, every
    ``save_secs`` or ``save_steps``, and at the end: the session's variables and global step, with the
    session's retention. Saves are asynchronous: the run stalls only to copy the variables.

    As in TF, a subclass (or a caller, before the session) may replace ``_timer``, change
    ``_steps_per_run`` or add to ``_listeners``: the hook then decides in Python when to save, and the
    library still writes the checkpoint (each save then waits for its write).

    Writing ``_saver``, ``_save_path`` or ``_checkpoint_dir`` — before the session, or in a
    subclass's ``begin`` before ``super().begin()`` — makes every save TF's ``_save`` in Python: the
    listeners' ``before_save``, ``saver.save(session, self._save_path, global_step=step)`` with
    ``_saver`` (any object with TF's ``save``; when None, the scaffold's saver), a CHECKPOINT session
    log in the event file of ``_checkpoint_dir``, then the listeners' ``after_save``, whose True stops
    training. Such saves are synchronous and skip the library's NaN check. A trainwatch Saver of the
    session's variables saving into the session's checkpoint directory saves through the session (its
    lock and retention); another Saver, into that directory, is refused by the session's lock. The
    ``saver`` argument itself is accepted for TF code: the session's variables are saved."""

    _EXTENSION_POINTS = ("_save",)
    # H33: the attributes whose writes take effect; a subclass whose code names one, or a caller that
    # replaced one before the session, gets TF's callbacks in Python, the library still writing the files
    # unless _saver, _save_path or _checkpoint_dir was written (then TF's _save in Python, C27).
    _TF_STATE = ("_timer", "_listeners", "_steps_per_run", "_saver", "_checkpoint_dir", "_save_path")
    _TF_CODE = True
    _tw_python_saves = False  # decided by TF's begin in a session

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None, save_graph_def=True,
                 *, async_checkpoint=True, deferred_listeners=False):
        """Initializes a ``CheckpointSaverHook``.

        Args:
          checkpoint_dir: the directory to save checkpoints to.
          save_secs: save every this many seconds; give this or ``save_steps``.
          save_steps: save every this many steps.
          saver: accepted for TF code; the checkpoint holds the variables registered with the
            session (``Scaffold(variables=…)`` or ``MonitoredTrainingSession(variables=…)``).
          checkpoint_basename: the checkpoint files' prefix.
          scaffold: accepted for TF code, like ``saver``.
          listeners: ``CheckpointSaverListener`` objects called around each save.
          save_graph_def: accepted for TF code; there is no graph to write.
          async_checkpoint: write in the background (the default); False writes within the run.
          deferred_listeners: with listeners, keep the write in the background and call them in a
            later run instead of waiting for it in the saving run.

        Raises:
          ValueError: both ``saver`` and ``scaffold``, or both or neither of ``save_secs`` and
            ``save_steps``, are given.
        """
        del save_graph_def  # there is no graph
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        options = native.Options()
        if save_secs is not None:
            options.set_double(native.TW_OPT_EVERY_N_SECS, float(save_secs))
        if save_steps is not None:
            options.set_int64(native.TW_OPT_EVERY_N_STEPS, int(save_steps))
        options.set_string(native.TW_OPT_CHECKPOINT_BASENAME, checkpoint_basename)
        options.set_int64(native.TW_OPT_ASYNC_CHECKPOINT, int(bool(async_checkpoint)))
        options.set_int64(native.TW_OPT_DEFERRED_CHECKPOINT_LISTENERS, int(bool(deferred_listeners)))
        self._tw_listeners = [_ListenerAdapter(l) for l in (listeners or [])]
        self._native = native.CheckpointSaverHook(_paths.encode(checkpoint_dir, "checkpoint_dir"), options,
                                                  native.ListenerVector(self._tw_listeners))
        self._tw_builtin = self._native
        self._tw_args = (checkpoint_dir, checkpoint_basename, bool(async_checkpoint))
        self._tw_given_saver = saver  # accepted for TF code; a _saver written later takes effect
        # TF's attributes (H33): _timer, _listeners and _steps_per_run take effect (see _handle_for);
        # the library's hook writes the checkpoint of the directory and basename given here, unless
        # _saver, _save_path or _checkpoint_dir is written (_writes_own_saves: TF's _save in Python).
        self._saver = saver
        self._scaffold = scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = _timer_or_none(save_secs, save_steps)
        self._listeners = list(listeners or [])
        self._steps_per_run = 1
        self._global_step_tensor = get_global_step()
        self._remember_tf_state()

    def _handle_for(self, owner):
        """Natively, the hook given at construction. With TF's callbacks in Python, a native hook
        whose own timer fires on every step and whose listeners are ``_listeners``: TF's after_run
        decides with ``_timer`` and ``_steps_per_run``, and calls the native after_run only in a run
        that saves, which then saves (through ``_save``) the step it decided."""
        self._native = self._tw_builtin
        self._tw_owner = weakref.ref(owner)  # whose scaffold's saver _get_saver falls back to
        self._tw_python_saves = False
        self._tw_python = self._subclass_uses_tf_state() or self._tf_state_replaced()
        if not self._tw_python:
            return super()._handle_for(owner)
        checkpoint_dir, basename, async_checkpoint = self._tw_args
        options = native.Options()
        options.set_int64(native.TW_OPT_EVERY_N_STEPS, 1)
        options.set_string(native.TW_OPT_CHECKPOINT_BASENAME, basename)
        options.set_int64(native.TW_OPT_ASYNC_CHECKPOINT, int(async_checkpoint))
        self._tw_python_listeners = [_HookListeners(self)]
        self._tw_begun = False
        self._native = native.CheckpointSaverHook(_paths.encode(checkpoint_dir, "checkpoint_dir"), options,
                                                  native.ListenerVector(self._tw_python_listeners))
        return WrapperAdapter(self, owner, _TF_CALLBACKS + ("_save",))

    def _inside(self, callback):
        """(wrapper, what the library passed) of the session's call of ``callback`` now running."""
        call = self._tw_call
        if call is None or call[0] != callback:
            raise self._not_by_hand(callback)
        if self._tw_python and callback != "begin" and not self._tw_begun:
            raise RuntimeError(f"{type(self).__name__}.{callback}: the built-in begin did not run: an override "
                               f"of begin must call super().begin()")
        return call[1], call[2]

    def _save(self, session, step):
        """TF's protected extension point: saves the checkpoint of ``step`` (listeners included) and
        returns whether a listener asked to stop; the hook requests the stop in after_run."""
        if self._tw_python and self._tw_python_saves:
            return self._tf_save(session, step)
        del session  # the session the hook was called with: the library's own
        wrapper, session_ref = self._inside("_save")
        return wrapper.super_save(session_ref, int(step))

    def _get_saver(self):
        """TF's: ``_saver`` when set, else the scaffold's saver (the session's when the hook has no
        scaffold)."""
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None and self._scaffold.saver is not None:
            return self._scaffold.saver
        owner = self._tw_owner() if getattr(self, "_tw_owner", None) is not None else None
        return owner._scaffold.saver if owner is not None else None

    def _writes_own_saves(self):
        """Whether TF's _save runs in Python (H33, C27): _saver, _save_path or _checkpoint_dir was
        written, so the library's hook would save something else or elsewhere."""
        checkpoint_dir, basename, _ = self._tw_args
        return ((self._saver is not None and self._saver is not self._tw_given_saver)
                or not _same_path(self._save_path, os.path.join(checkpoint_dir, basename))
                or not _same_path(self._checkpoint_dir, checkpoint_dir))

    def _tf_save(self, session, step):
        _logger.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        _logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        saver = self._get_saver()
        if saver is None:
            raise RuntimeError(f"{type(self).__name__}: no saver to save with: set _saver, or give the session a "
                               "Scaffold")
        saver.save(session, self._save_path, global_step=step)
        self._summary_writer.add_session_log(SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path),
                                             step)
        _logger.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _logger.info("A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                should_stop = True
        return should_stop

    # TF's callbacks (H33): the native hook's own, at the moments TF's code decides — or, once _saver,
    # _save_path or _checkpoint_dir was written, TF's own code in Python throughout (C27).
    def _tf_begin(self):
        wrapper, session_ref = self._inside("begin")
        self._global_step_tensor = get_global_step()
        self._tw_python_saves = self._writes_own_saves()
        if self._tw_python_saves:
            self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
            for listener in self._listeners:
                listener.begin()
        else:
            wrapper.super_begin(session_ref)  # the event file, the kept list, then the listeners' begin
        self._tw_begun = True

    def _tf_after_create_session(self, session, coord):
        wrapper, session_ref = self._inside("after_create_session")
        if self._tw_python_saves:
            global_step = session.run(self._global_step_tensor)
            self._save(session, global_step)  # B21: the state at the session's start
            self._timer.update_last_triggered_step(global_step)
            return
        wrapper.super_after_create_session(session_ref)  # B21: saves now, through _save
        self._timer.update_last_triggered_step(session.run(self._global_step_tensor))

    def _tf_before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _tf_after_run(self, run_context, run_values):
        wrapper, ctx = self._inside("after_run")
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):  # B22
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._tw_python_saves:
                    if self._save(run_context.session, global_step):
                        run_context.request_stop()
                    return
                wrapper.super_after_run(ctx)  # its every-step timer fires: saves global_step through _save
                _take_stop(run_context, ctx)

    def _tf_end(self, session):
        wrapper, session_ref = self._inside("end")
        if self._tw_python_saves:
            last_step = session.run(self._global_step_tensor)
            if last_step != self._timer.last_triggered_step():  # B23
                self._save(session, last_step)
            for listener in self._listeners:
                listener.end(session, last_step)
            self._summary_writer.flush()  # as the library's hook's end does
            return
        wrapper.super_end(session_ref)  # B23: a final save if the step moved since the last save


def _same_path(now, given):
    """Whether a path attribute still names what the constructor gave (any spelling of it)."""
    try:
        return os.path.normpath(os.fsencode(now)) == os.path.normpath(os.fsencode(given))
    except TypeError:
        return False


class _NanCallback(native.NanFunction):
    """on_nan(session, event) for NanTensorHook(action="callback")."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def on_nan(self, session_ref, event):
        self._fn(owner_of(session_ref).raw_session(session_ref), event)


# B31–B34; the rollback action is B48.
class NanTensorHook(NativeHook):
    """Monitors the loss and stops training if it is NaN: the run fails with
    ``NanLossDuringTrainingError``, or a stop is requested with ``fail_on_nan_loss=False``. Messages
    name the tensor, the step, the NaN/±Inf counts and the first bad index."""

    _ACTIONS = {"fail": native.TW_NAN_ACTION_FAIL, "stop": native.TW_NAN_ACTION_STOP,
                "callback": native.TW_NAN_ACTION_CALLBACK, "rollback": native.TW_NAN_ACTION_ROLLBACK}

    _TF_STATE = ("_loss_tensor", "_fail_on_nan_loss")
    _TF_CODE = True  # TF's form only: the guard's additions run natively

    def __init__(self, loss_tensor, fail_on_nan_loss=True, *, watch=(), action=None, detect_inf=None,
                 every_n_steps=None, max_rollbacks=None, on_nan=None):
        """Initializes a ``NanTensorHook``. The keyword-only arguments are trainwatch's additions.

        Args:
          loss_tensor: the name of the loss (an output the step publishes, or a variable).
          fail_on_nan_loss: fail the run on NaN (True) or request a stop (False).
          watch: more names or glob patterns to check ("grad/*").
          action: "fail", "stop", "rollback" (restore the newest good checkpoint written before the
            run that saw the NaN — one saved in that run is deleted first — and go on) or "callback"
            (``on_nan`` decides); default from ``fail_on_nan_loss``.
          detect_inf: also treat ±Inf as bad (default True with any addition; TF sees only NaN).
          every_n_steps: check every this many steps instead of every step.
          max_rollbacks: with "rollback", fail after this many rollbacks in one session.
          on_nan: with "callback", ``on_nan(session, event)``; raise to fail the run.

        Raises:
          ValueError: ``action`` is not one of the four, or ``on_nan`` is given without
            ``action="callback"`` (or missing with it).
        """
        self._loss_tensor = str(loss_tensor)
        self._fail_on_nan_loss = fail_on_nan_loss
        if not watch and action is None and detect_inf is None and every_n_steps is None \
                and max_rollbacks is None and on_nan is None:
            self._native = native.NanTensorHook(str(loss_tensor), bool(fail_on_nan_loss))
            self._remember_tf_state()
            return
        self._TF_CODE = False
        if action is None:
            action = "callback" if on_nan is not None else "fail" if fail_on_nan_loss else "stop"
        if action not in self._ACTIONS:
            raise ValueError(f"action must be one of {sorted(self._ACTIONS)}; got {action!r}")
        if (action == "callback") != (on_nan is not None):
            raise ValueError('on_nan is required with action="callback" and only then')
        options = native.Options()
        options.set_int64(native.TW_OPT_NAN_ACTION, self._ACTIONS[action])
        if detect_inf is not None:
            options.set_int64(native.TW_OPT_NAN_DETECT_INF, int(bool(detect_inf)))
        if every_n_steps is not None:
            options.set_int64(native.TW_OPT_NAN_EVERY_N_STEPS, int(every_n_steps))
        if max_rollbacks is not None:
            options.set_int64(native.TW_OPT_NAN_MAX_ROLLBACKS, int(max_rollbacks))
        names = [str(loss_tensor)] + [str(name) for name in watch]
        self._tw_on_nan = _NanCallback(on_nan) if on_nan is not None else None
        self._native = native.NanTensorHook(native.StringVector(names), options, self._tw_on_nan)

    def _run_args(self, requested):
        """TF's SessionRunArgs(loss_tensor): run_values.results is the loss value itself."""
        if list(requested) == [self._loss_tensor]:
            return SessionRunArgs(self._loss_tensor)
        return super()._run_args(requested)

    def _tf_before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def _tf_after_run(self, run_context, run_values):
        if np.isnan(to_host(run_values.results)):  # B32–B34; a device loss comes as a device copy
            if self._fail_on_nan_loss:
                _logger.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError("NaN loss during training.")
            _logger.warning("Model diverged with loss = NaN.")
            run_context.request_stop()


class _Formatter(native.LogFormatter):
    """LoggingTensorHook's formatter(dict tag → value) → str in the library (a SWIG director)."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def format(self, values):
        return str(self._fn({t.name(): to_value(t) for t in values}))


# B6–B10; a formatter's line is logged as written (B9).
class LoggingTensorHook(NativeHook):
    """Prints the given values every N local steps, every N seconds, or at end: "tag = value, …
    (0.123 sec)" at INFO on the "trainwatch" logger; a formatter's line is logged as written."""

    _EXTENSION_POINTS = ("_log_tensors",)
    _TF_STATE = ("_tensors", "_tag_order", "_current_tensors", "_should_trigger", "_iter_count", "_timer",
                 "_log_at_end", "_formatter")
    _TF_CODE = True

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        """Initializes a ``LoggingTensorHook``.

        Args:
          tensors: the names to log: a list of names, or a dict tag → name (logged sorted by tag).
          every_n_iter: log every this many runs of this session.
          every_n_secs: log every this many seconds; give this or ``every_n_iter`` (unless
            ``at_end``).
          at_end: also log the values of the last run when the session ends.
          formatter: ``formatter(dict tag → value)`` returns the line to log instead.

        Raises:
          ValueError: neither a period nor ``at_end``, or both periods, are given.
        """
        if isinstance(tensors, dict):
            tags, names = zip(*tensors.items()) if tensors else ((), ())
        elif isinstance(tensors, str):
            tags, names = (), (tensors,)
        else:
            tags, names = (), tuple(tensors)
        options = _timer_options(every_n_iter, every_n_secs)
        options.set_int64(native.TW_OPT_LOG_AT_END, int(bool(at_end)))
        self._tw_formatter = _Formatter(formatter) if formatter is not None else None
        self._native = native.LoggingTensorHook(native.StringVector([str(n) for n in names]),
                                                native.StringVector([str(t) for t in tags]), options,
                                                self._tw_formatter)
        # TF's attributes (H33); the native hook validated the arguments (B6).
        self._tensors = {str(t): str(n) for t, n in zip(tags or names, names)}  # tag → name, TF's order
        self._tag_order = sorted(self._tensors) if tags else list(self._tensors)
        self._formatter = formatter
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        self._timer = NeverTriggerTimer() if only_at_end else SecondOrStepTimer(every_secs=every_n_secs,
                                                                               every_steps=every_n_iter)
        self._log_at_end = at_end
        self._remember_tf_state()

    def _run_args(self, requested):
        """TF's SessionRunArgs(tag → tensor) on the runs that log."""
        return SessionRunArgs(dict(self._tensors)) if requested else None

    def _log_tensors(self, tensor_values):
        """TF's protected extension point: called with tag → value when the hook logs; the built-in
        formats and logs them (and moves the timer: an override that skips it is called every run)."""
        call = self._native_call("_log_tensors")
        if call is None:
            return self._tf_log_tensors(tensor_values)
        held = native.TensorSet()
        held.add_dict(tensor_values, False, "value")
        call[0].super_log_tensors(held.tensors())

    def _tf_begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = dict(self._tensors)  # TF resolves names to tensors here; names stay names
        self._tw_last_values = None

    def _tf_before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        # at_end: every run fetches, end() logs the last run's values (a step cannot run again, B10).
        if self._should_trigger or self._log_at_end:
            return SessionRunArgs(self._current_tensors)
        return None

    def _tf_after_run(self, run_context, run_values):
        if self._log_at_end:
            self._tw_last_values = run_values.results
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def _tf_end(self, session):
        if self._log_at_end and getattr(self, "_tw_last_values", None) is not None:
            self._log_tensors(self._tw_last_values)

    def _tf_log_tensors(self, tensor_values):
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                _logger.info(self._formatter(tensor_values))  # as written: no suffix (B9)
            else:
                stats = ", ".join("%s = %s" % (tag, tensor_values[tag]) for tag in self._tag_order)  # str(), as TF
                if elapsed_secs is not None:
                    _logger.info("%s (%.3f sec)", stats, elapsed_secs)
                else:
                    _logger.info("%s", stats)
        finally:
            np.set_printoptions(**original)


# B26–B30
class StepCounterHook(_GlobalStepArgs, NativeHook):
    """Hook that counts steps per second: logs "global_step/sec: <rate>" and writes it as a summary."""

    _EXTENSION_POINTS = ("_log_and_record",)
    _TF_STATE = ("_timer", "_summary_writer", "_output_dir", "_last_global_step", "_steps_per_run",
                 "_global_step_tensor", "_summary_tag")
    _TF_CODE = True

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        """Initializes a ``StepCounterHook``.

        Args:
          every_n_steps: log every this many steps (pass None to use ``every_n_secs``).
          every_n_secs: log every this many seconds.
          output_dir: the directory of the event file to write the rate to.
          summary_writer: a ``summary.FileWriter`` to write the rate with (instead of
            ``output_dir``); with neither, the rate is only logged.

        Raises:
          ValueError: both or neither of the periods are given.
        """
        self._writer = _writer(summary_writer)
        self._native = native.StepCounterHook(_steps(every_n_steps), _secs(every_n_secs),
                                              "" if output_dir is None else _paths.encode(output_dir, "output_dir"),
                                              self._writer)
        # TF's attributes (H33); the native hook validated the arguments (B26).
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1
        self._global_step_tensor = get_global_step()  # TF sets these two in begin(): known already here
        self._summary_tag = self._global_step_tensor.op.name + "/sec"
        self._remember_tf_state()

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        """TF's protected extension point: logs "global_step/sec: <rate>" and writes it as a summary."""
        call = self._native_call("_log_and_record")
        if call is None:
            return self._tf_log_and_record(elapsed_steps, elapsed_time, global_step)
        call[0].super_log_and_record(int(elapsed_steps), float(elapsed_time), int(global_step))

    def _tf_begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriter(self._output_dir)  # the directory's shared event file
        self._global_step_tensor = get_global_step()
        self._summary_tag = self._global_step_tensor.op.name + "/sec"
        self._tw_warnings = 0

    def _tf_before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _tf_after_run(self, run_context, run_values):
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = run_context.session.run(self._global_step_tensor)  # B28: the step after the run
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step and self._tw_warnings < 5:  # B29
            self._tw_warnings += 1
            _logger.warning("It seems that global step (tf.train.get_global_step) has not been increased. Current "
                            "value (could be stable): %s vs previous value: %s. You could increase the global step "
                            "by passing tf.train.get_global_step() to Optimizer.apply_gradients or "
                            "Optimizer.minimize.", stale_global_step, self._last_global_step)
        self._last_global_step = stale_global_step

    def _tf_end(self, session):
        if self._summary_writer is not None:
            self._summary_writer.flush()

    def _tf_log_and_record(self, elapsed_steps, elapsed_time, global_step):
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            self._summary_writer.add_summary({self._summary_tag: steps_per_sec}, global_step)
        _logger.info("%s: %g", self._summary_tag, steps_per_sec)


# B35–B40, B49
class SummarySaverHook(NativeHook):
    """Saves summaries every N steps or N seconds: scalars for one-element values, histograms only
    of the larger values asked for.

    As in TF, a subclass (or a caller, before the session) may replace ``_timer``, ``_summary_op``,
    ``_summary_writer`` (any object with TF's ``add_summary``, ``add_session_log`` and ``flush``, such
    as a test's fake writer), ``_output_dir``, ``_scaffold``, ``_next_step`` or
    ``_global_step_tensor``: the hook then runs TF's callbacks in Python over them, writing through
    whatever ``_summary_writer`` holds (the scalars as one ``Summary``, the histograms as a mapping of
    tags to arrays, which ``FileWriter.add_summary`` writes as histograms)."""

    # H33: a subclass whose code names one of these, or a caller that replaced one before the session,
    # gets TF's callbacks in Python; the library's hook then only stands in the session's list (D14).
    _TF_STATE = ("_timer", "_summary_op", "_summary_writer", "_output_dir", "_scaffold", "_next_step",
                 "_global_step_tensor", "_request_summary")
    _TF_CODE = True

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None, histograms=None):
        """Initializes a ``SummarySaverHook``.

        Args:
          save_steps: save every this many steps; give this or ``save_secs``.
          save_secs: save every this many seconds.
          output_dir: the directory of the event file.
          summary_writer: a ``summary.FileWriter`` to write with (instead of ``output_dir``); or, as
            TF's hook tests pass, any object with ``add_summary``, ``add_session_log`` and
            ``flush`` (the hook then runs TF's callbacks in Python and writes only there).
          scaffold: summarise every value the step publishes as scalars, no histogram (give this or
            ``summary_op``).
          summary_op: the names or glob patterns of the published outputs and variables to
            summarise; the larger values it names become histograms.
          histograms: a name, or a list of names or glob patterns, of the values written as
            histograms instead (fetched too): a histogram of every variable would cost a pass over
            the whole model.

        Raises:
          ValueError: not exactly one of ``scaffold`` and ``summary_op``, or neither
            ``output_dir`` nor ``summary_writer``, or both or neither periods, or an empty
            ``histograms`` entry, are given.
          TypeError: ``summary_writer`` is neither a ``summary.FileWriter`` nor has ``add_summary``.
        """
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        names = [] if summary_op is None else [summary_op] if isinstance(summary_op, str) else list(summary_op)
        options = _timer_options(save_steps, save_secs)
        histogram_names = _histogram_names(histograms, "histograms")
        if histogram_names is not None:
            options.set_string(native.TW_OPT_SUMMARY_HISTOGRAM_NAMES, histogram_names)
        python_writer = _is_python_writer(summary_writer)
        if output_dir is not None:
            options.set_string(native.TW_OPT_OUTPUT_DIR, _paths.encode(output_dir, "output_dir"))
        elif python_writer:  # the library's hook is never begun: TF's code writes to summary_writer
            options.set_string(native.TW_OPT_OUTPUT_DIR, os.curdir)
        self._writer = None if python_writer else _writer(summary_writer)
        self._native = native.SummarySaverHook(native.StringVector([str(n) for n in names]), options, self._writer)
        self._tw_histograms = None if histograms is None else [histograms] if isinstance(histograms, str) \
            else list(histograms)
        self._tw_always_python = python_writer
        # TF's attributes (H33).
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = _timer_or_none(save_secs, save_steps)
        self._next_step = None
        self._global_step_tensor = get_global_step()  # TF sets these two in begin(): known already here
        self._remember_tf_state()

    def _tf_state_replaced(self):
        return self._tw_always_python or super()._tf_state_replaced()

    def _run_args(self, requested):
        """TF's SessionRunArgs({"global_step": …, "summary": …}), the summary only on the runs that save."""
        fetches = {"global_step": "global_step"}
        if requested:
            fetches["summary"] = list(requested)
        return SessionRunArgs(fetches)

    def _get_summary_op(self):
        """TF's: the list of names to summarise, from ``_summary_op``, else the scaffold's: every
        published value."""
        summary_op = self._summary_op
        if summary_op is None:
            summary_op = getattr(self._scaffold, "summary_op", None)
        if summary_op is None:
            summary_op = _EVERY_VALUE
        return list(summary_op) if isinstance(summary_op, (list, tuple)) else [summary_op]

    # TF's callbacks (H33), with the library's way of summarising the values (B49).
    def _tf_begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)  # the directory's shared event file
        self._next_step = None
        self._global_step_tensor = get_global_step()

    def _tf_before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary:
            summary_op = self._get_summary_op()
            histograms = [n for n in self._tw_histograms or () if n not in summary_op]  # fetched too (B49)
            self._tw_requested = summary_op + histograms
            requests["summary"] = list(self._tw_requested)
        return SessionRunArgs(requests)

    def _tf_after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        stale_global_step = run_values.results["global_step"]
        global_step = stale_global_step + 1
        if self._next_step is None or self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)  # B39
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            if "summary" in run_values.results:
                for summary in self._summaries(run_values.results["summary"]):
                    self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def _tf_end(self, session):
        if self._summary_writer:
            self._summary_writer.flush()

    def _summaries(self, values):
        """What TF's summary ops would have computed from the fetched values (B49): one ``Summary`` of
        the one-element values, and a mapping tag → array of the larger ones asked for as histograms."""
        scalars, histograms, seen = [], {}, set()
        for name, value in zip(self._tw_requested, values):
            # A pattern matches the run's other fetches too: the global step is fetched, not published.
            tagged = [(t, v) for t, v in value.items() if t != "global_step"] if is_pattern(name) else [(name, value)]
            for tag, tagged_value in tagged:
                if tag in seen:  # a value both lists fetch is written once
                    continue
                seen.add(tag)
                tagged_value = to_host(tagged_value)
                if np.size(tagged_value) == 1:
                    scalars.append(Summary.Value(tag=tag, simple_value=float(np.asarray(tagged_value).reshape(()))))
                elif self._wants_histogram(tag):
                    histograms[tag] = tagged_value
        return ([Summary(value=scalars)] if scalars else []) + ([histograms] if histograms else [])

    def _wants_histogram(self, tag):
        summarised = self._get_summary_op()
        patterns = self._tw_histograms if self._tw_histograms is not None else (
            [] if summarised == [_EVERY_VALUE] else summarised)
        return any(p == tag or (is_pattern(p) and fnmatchcase(tag, p)) for p in patterns)


def _is_python_writer(summary_writer):
    """Whether ``summary_writer`` is TF's duck-typed writer (a test's fake) rather than a FileWriter."""
    if summary_writer is None or isinstance(summary_writer, (FileWriter, native.SummaryWriter)):
        return False
    if not hasattr(summary_writer, "add_summary"):
        raise TypeError("summary_writer must be a trainwatch.summary.FileWriter or have add_summary; got "
                        f"{type(summary_writer).__name__}")
    return True


class _FeedFunction(native.FeedFunction):
    """FeedFnHook's feed_fn() → dict name → array in the library (a SWIG director)."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn
        self._held = native.TensorSet()
        self.last = None  # what feed_fn returned for the run in progress

    def feeds(self):
        feed_dict = self._fn()
        self.last = feed_dict
        held = native.TensorSet()  # the previous call's run has returned: its arrays may go
        held.add_dict(feed_dict, False, "feed")
        self._held = held
        for tensor in held.tensors():
            remember_fed(tensor.name(), tensor.address(), feed_dict[tensor.name()])
        return held.tensors()


# B44; the feed conflict rules are H22/H23.
class FeedFnHook(NativeHook):
    """Runs ``feed_fn`` and sets the ``feed_dict`` of every run accordingly. The step sees the very
    objects returned."""

    _TF_CODE = True  # for driving it by hand; in a session the library calls feed_fn (no TF state to act on)

    def __init__(self, feed_fn):
        """Initializes a ``FeedFnHook``.

        Args:
          feed_fn: called with no arguments before each run; returns a dict name → array to feed.
            Feeding a name the caller or another hook feeds fails the run.
        """
        self.feed_fn = feed_fn  # TF's attribute: the library calls whatever it holds (H33)
        self._tw_feed_fn = _FeedFunction(lambda: self.feed_fn())
        self._native = native.FeedFnHook(self._tw_feed_fn)

    def _run_args(self, requested):
        """TF's SessionRunArgs(fetches=None, feed_dict=feed_fn())."""
        del requested
        return SessionRunArgs(None, self._tw_feed_fn.last)

    def _tf_before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


# B43
class FinalOpsHook(NativeHook):
    """A hook which evaluates values at the end of a session; ``final_ops_values`` is None until
    then.

    As in TF, ``end`` runs whatever ``_final_ops`` and ``_final_ops_feed_dict`` hold then, and stores
    the values in ``_final_ops_values``: a subclass that changes or reads them (or a caller that
    replaced one before the session) gets TF's callbacks in Python; ``end(session)`` may also be called
    by hand with a session's ``RawSession``."""

    _TF_STATE = ("_final_ops", "_final_ops_feed_dict", "_final_ops_values")
    _TF_CODE = True

    def __init__(self, final_ops, final_ops_feed_dict=None):
        """Initializes a ``FinalOpsHook``.

        Args:
          final_ops: a step function, called without hooks at the end (the values are then a dict
            name → what it published); or, as in TF, fetches: a name or any nesting of names of
            variables, "global_step" (read at the end) and published outputs (their values in the
            last run, which this hook fetches on every run); the values then mirror that structure.
          final_ops_feed_dict: feeds for the step function.

        Raises:
          TypeError: ``final_ops`` is neither a step function nor names.
          ValueError: ``final_ops_feed_dict`` is given with names.
        """
        self._final_ops = final_ops  # TF's attributes (H33)
        self._final_ops_feed_dict = final_ops_feed_dict
        self._tw_plan = None
        self._tw_variables = None  # with TF's callbacks in Python: the session's variable names
        self._tw_last = {}         # the published outputs named in final_ops: their values in the last run
        if callable(final_ops):
            self._tw_step = StepRunner(None, final_ops)
        elif is_fetches(final_ops):
            if final_ops_feed_dict:
                raise ValueError("final_ops_feed_dict feeds a step function; final_ops are names here")
            self._tw_plan = FetchPlan(final_ops)
            self._tw_outputs = ()  # the names only a run answers, known once the session's variables are
            self._tw_values = None
            self._tw_step = StepRunner(None, self._read_final)
        else:
            raise TypeError("final_ops must be a step function (StepContext → dict of outputs) or names (str) in "
                            f"lists, tuples or dicts; got {type(final_ops).__name__}")
        feeds = native.TensorSet()
        feeds.add_dict(dict(final_ops_feed_dict or {}), False, "feed")
        self._native = native.FinalOpsHook(self._tw_step, feeds.tensors())  # feeds are copied
        self._remember_tf_state()
        # What end stores is no input: only replacing _final_ops or its feeds changes what end does.
        self._tw_initial.pop("_final_ops_values", None)

    @property
    def _final_ops_values(self):
        """TF's attribute behind ``final_ops_values``: what TF's end stored (or a subclass assigned),
        else what the library's end computed."""
        held = self.__dict__.get("_tw_held", _NOTHING)
        return held if held is not _NOTHING else self._tw_native_values()

    @_final_ops_values.setter
    def _final_ops_values(self, value):
        self._tw_held = value

    @property
    def final_ops_values(self):
        """The values of ``final_ops`` once the session ended cleanly, else None."""
        return self._final_ops_values

    def _tw_native_values(self):
        if not self._native.has_values():
            return None
        if self._tw_plan is not None:
            return self._tw_values
        return {t.name(): to_value(t) for t in self._native.values()}

    def _handle_for(self, owner):
        handle = super()._handle_for(owner)
        if self._tw_python:
            self._tw_variables = frozenset(owner._variables)
            self._tw_last = {}
        else:
            self.__dict__.pop("_tw_held", None)  # the library's end gives the values (TF's end overwrites them)
        return handle

    def _python_callbacks(self, owner):
        callbacks = super()._python_callbacks(owner)
        if self._tw_plan is not None:
            self._tw_outputs = [n for n in self._tw_plan.names if n != "global_step" and n not in owner._variables]
            if self._tw_outputs:
                callbacks |= {"before_run", "after_run"}
        return callbacks

    def before_run(self, run_context):
        args = super().before_run(run_context)
        if self._tw_call is None or self._tw_python:  # TF's code ran
            return args
        return SessionRunArgs(list(self._tw_outputs)) if self._tw_plan is not None and self._tw_outputs else args

    def after_run(self, run_context, run_values):
        super().after_run(run_context, run_values)
        if self._tw_call is None or self._tw_python:
            return
        if self._tw_plan is not None and self._tw_outputs:
            results = RunResults(self._native_call("after_run")[1])
            try:
                self._tw_last = {name: results.matching(name) if is_pattern(name) else results.value(name)
                              for name in self._tw_outputs}
            except NotFoundError:  # a subclass's before_run requested other names
                self._tw_last = {}

    def _read_final(self, step_context):
        session = step_context.session
        last = self._tw_last
        source = _FinalValues(lambda name: last[name] if name in last else session.run(name))
        self._tw_values = self._tw_plan.results(source)

    # TF's end (H33); in a session, before_run and after_run also keep the last run's values of the
    # published outputs _final_ops names, which a session cannot read once the run is over.
    def _tf_before_run(self, run_context):
        self._tw_requested = self._published_names()
        return SessionRunArgs(list(self._tw_requested)) if self._tw_requested else None

    def _tf_after_run(self, run_context, run_values):
        if self._tw_requested:
            self._tw_last = dict(zip(self._tw_requested, run_values.results))

    def _tf_end(self, session):
        if self._final_ops is not None:
            try:
                self._final_ops_values = self._run_final_ops(session)
            except (OutOfRangeError, StopIteration):
                _logger.warning(_FINAL_OPS_OUT_OF_RANGE)
                raise

    def _published_names(self):
        """The names in _final_ops that are neither variables nor the global step (in a session only)."""
        if self._tw_variables is None or self._tw_call is None or not is_fetches(self._final_ops):
            return []
        return [n for n in FetchPlan(self._final_ops).names if n != "global_step" and n not in self._tw_variables]

    def _run_final_ops(self, session):
        """TF's ``session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)``, the outputs named
        coming from the last run."""
        last = self._tw_last
        if callable(self._final_ops) or not last:
            return session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)
        source = _FinalValues(lambda name: last[name] if name in last else session.run(name))
        return FetchPlan(self._final_ops).results(source)


_NOTHING = object()
_FINAL_OPS_OUT_OF_RANGE = (
    "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. This typically means "
    "the Ops running by the FinalOpsHook have a dependency back to some input source, which should not happen. "
    "For example, for metrics in tf.estimator.Estimator, all metrics functions return two Ops: `value_op` and  "
    "`update_op`. Estimator.evaluate calls the `update_op` for each batch of the data in input source and, once "
    "it is exhausted, it call the `value_op` to get the metric values. The `value_op` here should have "
    "dependency back to variables reading only, rather than reading another batch from input. Otherwise, the "
    "`value_op`, executed by `FinalOpsHook`, triggers another data reading, which ends OutOfRangeError/"
    "StopIteration. Please fix that.")


class _FinalValues:
    """FinalOpsHook's names at the end: the last run's outputs, the session's variables and step."""

    def __init__(self, lookup):
        self.value = self.matching = lookup


class _GlobalStepFunction(native.GlobalStepFunction):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def global_step(self, session_ref):
        return int(self._fn(owner_of(session_ref).raw_session(session_ref)))


# B41–B42
class GlobalStepWaiterHook(NativeHook):
    """Delays execution until the global step reaches ``wait_until_step``."""

    _TF_STATE = ("_wait_until_step", "_worker_is_started", "_global_step_tensor")

    def __init__(self, wait_until_step, *, poll_secs=None, max_wait_secs=None, global_step_fn=None):
        """Initializes a ``GlobalStepWaiterHook``. The keyword-only arguments are trainwatch's
        additions.

        Args:
          wait_until_step: the first run starts once the global step is at least this.
          poll_secs: how often to read the global step (0.5 s).
          max_wait_secs: give up after this long (the run raises ``DeadlineExceededError``);
            default: wait for ever, as TF.
          global_step_fn: ``global_step_fn(session)`` reads a step another process advances;
            default: the session's own global step.
        """
        options = native.Options()
        if poll_secs is not None:
            options.set_double(native.TW_OPT_WAIT_POLL_SECS, float(poll_secs))
        if max_wait_secs is not None:
            options.set_double(native.TW_OPT_WAIT_MAX_SECS, float(max_wait_secs))
        self._tw_global_step_fn = _GlobalStepFunction(global_step_fn) if global_step_fn is not None else None
        self._native = native.GlobalStepWaiterHook(int(wait_until_step), options, self._tw_global_step_fn)
        self._wait_until_step = wait_until_step  # TF's attributes (H33)
        self._worker_is_started = False
        self._global_step_tensor = get_global_step()
        self._TF_CODE = poll_secs is None and max_wait_secs is None and global_step_fn is None  # TF's form
        self._remember_tf_state()

    def _tf_begin(self):
        self._worker_is_started = False
        self._global_step_tensor = get_global_step()

    def _tf_before_run(self, run_context):
        """B42: waits (polling every 0.5 s) in the first run until the global step reaches the target."""
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _logger.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                _logger.info("Waiting for global step %d before starting training. Current step is %d.",
                             self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


# B45–B47
class ProfilerHook(NativeHook):
    """Captures a trace every N steps or seconds (never on the first run):
    ``<output_dir>/timeline-<step>.json``, a Chrome trace of one run with each hook's
    before_run/after_run and the step function.

    As in TF, a subclass (or a caller, before the session) may replace ``_timer``, ``_output_file``,
    ``_next_step`` or ``_global_step_tensor``, or override ``_save``: the hook then runs TF's callbacks
    in Python, which pick the runs to trace, and the library traces those runs (it records every run from the second one on
    and keeps the trace of a run TF's ``after_run`` saves). A trace is written when its run is over;
    one whose ``_output_file`` is not ``timeline-{}.json`` in the directory the session began with is
    moved there at the next run or at the end. The first run of a session is never recorded, and
    the first run picked after a failed run may not be: a subclass picking one gets no trace of it."""

    # H33: a subclass whose code names one of these, or a caller that replaced one before the session,
    # gets TF's callbacks in Python, the library still tracing the runs they pick.
    _TF_STATE = ("_timer", "_output_file", "_next_step", "_global_step_tensor", "_request_summary")
    _TF_CODE = True

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        """Initializes a ``ProfilerHook``.

        Args:
          save_steps: trace every this many steps; give this or ``save_secs``.
          save_secs: trace every this many seconds.
          output_dir: the directory of the trace files.
          show_dataflow: accepted for TF code; there is no dataflow to show without a graph.
          show_memory: accepted for TF code; nothing to show, as ``show_dataflow``.

        Raises:
          ValueError: both or neither periods are given.
        """
        self._native = native.ProfilerHook(_steps(save_steps), _secs(save_secs), _paths.encode(output_dir, "output_dir"))
        self._tw_builtin = self._native
        self._tw_moves = []  # (written, wanted): traces to move to the path _output_file named
        # TF's attributes (H33); _show_dataflow and _show_memory have nothing to show.
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = _timer_or_none(save_secs, save_steps)
        self._next_step = None
        self._global_step_tensor = get_global_step()  # TF sets it in begin(): known already here
        self._remember_tf_state()

    def _handle_for(self, owner):
        """Natively, the hook given at construction. With TF's callbacks in Python, a library hook
        whose own timer fires every run, writing into the directory of ``_output_file``: its after_run,
        called in the first run and in the runs TF's code traces, keeps the trace of that run."""
        self._native = self._tw_builtin
        overrides_save = type(self)._save is not ProfilerHook._save  # TF's after_run calls it
        self._tw_python = overrides_save or self._subclass_uses_tf_state() or self._tf_state_replaced()
        if not self._tw_python:
            return super()._handle_for(owner)
        self._tw_trace_dir = os.path.dirname(os.fspath(self._output_file))
        self._native = native.ProfilerHook(1, _UNSET_SECS, _paths.encode(self._tw_trace_dir, "_output_file"))
        return WrapperAdapter(self, owner, _TF_CALLBACKS)

    def _session_call(self, callback):
        """(wrapper, what the library passed) inside the session's call of ``callback``, else None."""
        call = self._tw_call
        return (call[1], call[2]) if call is not None and call[0] == callback and self._tw_python else None

    def _save(self, step, save_path, step_stats):
        """TF's protected method: saves the trace of the run in progress, of global step ``step``, to
        ``save_path`` (``step_stats``: TF's RunMetadata, which a run here does not have; ignored)."""
        del step_stats
        call = self._session_call("after_run")
        if call is None:
            raise RuntimeError(f"{type(self).__name__}._save: only a run of a session has a trace to save")
        wrapper, ctx = call
        wrapper.super_after_run(ctx)  # the library keeps this run's trace, written when the run is over
        written = os.path.join(self._tw_trace_dir or os.curdir, f"timeline-{int(step)}.json")
        if os.path.abspath(written) != os.path.abspath(save_path):
            self._tw_moves.append((written, os.fspath(save_path)))

    def _move_traces(self):
        moves, self._tw_moves = self._tw_moves, []
        for written, wanted in moves:
            if not os.path.exists(written):
                _logger.warning("ProfilerHook: no trace to save into '%s': the run was not recorded", wanted)
                continue
            os.makedirs(os.path.dirname(wanted) or os.curdir, exist_ok=True)
            shutil.move(written, wanted)

    # TF's callbacks (H33): TF's decisions, the library's traces.
    def _tf_begin(self):
        self._next_step = None
        self._global_step_tensor = get_global_step()
        call = self._session_call("begin")
        if call is not None:
            call[0].super_begin(call[1])  # creates the directory

    def _tf_before_run(self, run_context):
        self._move_traces()
        self._request_summary = self._next_step is not None and self._timer.should_trigger_for_step(self._next_step)
        return SessionRunArgs({"global_step": self._global_step_tensor})

    def _tf_after_run(self, run_context, run_values):
        stale_global_step = run_values.results["global_step"]
        first = self._next_step is None
        if first:  # B47: the timer starts counting from the first run, which is not traced
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step), None)
        elif first:
            call = self._session_call("after_run")
            if call is not None:
                call[0].super_after_run(call[1])  # the library's hook records the runs from the next one on
        self._next_step = global_step + 1

    def _tf_end(self, session):
        call = self._session_call("end")
        if call is not None:
            call[0].super_end(call[1])
        self._move_traces()


# B1–B5; also the _timer of the built-in hooks (H33).
class SecondOrStepTimer:
    """Timer that triggers at most once every N seconds or once every N steps, for hooks written in
    Python and as the ``_timer`` of the built-in hooks: replacing a LoggingTensorHook's,
    StepCounterHook's, CheckpointSaverHook's, SummarySaverHook's or ProfilerHook's ``_timer`` changes
    when it triggers. (The library's hooks otherwise use their own timer.)"""

    def __init__(self, every_secs=None, every_steps=None):
        """Initializes a ``SecondOrStepTimer``.

        Args:
          every_secs: trigger every this many seconds.
          every_steps: trigger every this many steps.

        Raises:
          ValueError: both or neither are given.
        """
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        """Forgets the last trigger: the next step triggers."""
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """Returns whether ``step`` should trigger: the first call, or enough seconds or steps since
        the last trigger (never twice for the same step).

        Args:
          step: the global step.
        """
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Marks ``step`` as triggered.

        Args:
          step: the global step that triggered.

        Returns:
          (elapsed_secs, elapsed_steps) since the last trigger, or (None, None) the first time.
        """
        now = time.time()
        elapsed = (None, None) if self._last_triggered_time is None else (
            now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        """Returns the step of the last trigger, or None."""
        return self._last_triggered_step


class NeverTriggerTimer:
    """TF's timer of a LoggingTensorHook that logs only at the end: never triggers (B5)."""

    def reset(self):
        pass

    def should_trigger_for_step(self, step):
        del step
        return False

    def update_last_triggered_step(self, step):
        del step
        return (None, None)

    def last_triggered_step(self):
        return None
