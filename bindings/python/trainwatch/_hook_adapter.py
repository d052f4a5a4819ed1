"""Python hooks inside the library's hook list (SWIG directors of the C++ facade).

HookAdapter runs a SessionRunHook written in Python (a director of the facade's Hook). WrapperAdapter
runs a Python subclass of a built-in hook (a director of the facade's WrappedHook around the built-in's
native hook): the callbacks the subclass overrides run in Python, the others stay native, and the
built-in's methods called through super() run the native hook's callback (basic_session_run_hooks).

Both translate TF's hook protocol to the library's: SessionRunArgs become fetch requests and feeds,
results are rebuilt in the fetches' structure, and SessionRunContext.request_stop reaches the run.
Exceptions a hook raises come out of the session call unchanged; an AbortedError triggers recovery.
"""
import logging

from . import native
from ._fetches import FetchPlan, RunResults
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues
from .tensors import to_value


class _Protocol:
    """TF's SessionRunHook protocol over the library's callbacks, for one Python hook object."""

    def _bind(self, hook, owner):
        self._hook = hook
        self._owner = owner
        self._plan = None  # this run's fetches

    def begin(self, session_ref):
        self._hook.begin()

    def after_create_session(self, session_ref):
        session = self._owner.raw_session(session_ref)
        self._hook.after_create_session(session, self._owner.coordinator())

    def before_run(self, ctx):
        run_context = self._run_context(ctx)
        args = self._hook.before_run(run_context)
        self._plan = None
        if args is not None:
            if not isinstance(args, SessionRunArgs):
                raise TypeError(f"{type(self._hook).__name__}.before_run must return SessionRunArgs or None; "
                                f"got {type(args).__name__}")
            if args.fetches is not None:
                self._plan = FetchPlan(args.fetches)
                self._plan.request(ctx)  # a name the built-in requested already is a no-op
            feeds = self._new_feeds(args.feed_dict)
            if feeds:
                state = self._owner._runner.state
                native.add_feeds(ctx, feeds, state.outputs)
                state.objects.update(feeds)
        self._forward_stop(run_context, ctx)

    def after_run(self, ctx):
        run_context = self._run_context(ctx)
        results = None
        if self._plan is not None:
            results = self._plan.results(RunResults(ctx))
            self._owner._last_run_values.update(self._plan.values)  # what end() can read (B10)
        self._hook.after_run(run_context, SessionRunValues(results))
        self._forward_stop(run_context, ctx)

    def end(self, session_ref):
        self._hook.end(self._owner.raw_session(session_ref))

    def on_error(self, session_ref, error_code):
        try:
            self._hook.on_error(self._owner.raw_session(session_ref), error_code)
        except Exception:  # on_error cannot fail the run it reports
            logging.getLogger("trainwatch").exception("%s.on_error raised", type(self._hook).__name__)

    def _new_feeds(self, feed_dict):
        return feed_dict

    def _run_context(self, ctx):
        """The run's one SessionRunContext (H5), created by the first Python hook that needs it."""
        state = self._owner._runner.state
        if state.run_context is None:
            state.run_context = SessionRunContext(SessionRunArgs(self._owner._current_step_fn,
                                                                 self._owner._current_feed_dict),
                                                  self._owner.raw_session(ctx.session()))
            state.used = True
        if ctx.stop_requested():
            state.run_context._stop_requested = True
        return state.run_context

    @staticmethod
    def _forward_stop(run_context, ctx):
        if run_context.stop_requested and not ctx.stop_requested():
            ctx.request_stop()


class HookAdapter(_Protocol, native.Hook):
    """A SessionRunHook written in Python."""

    def __init__(self, hook, owner):
        native.Hook.__init__(self, type(hook).__name__)
        self._bind(hook, owner)


# What a subclass of a built-in hook may override — TF's callbacks and protected extension points —
# and the WrappedHook mask bit of each.
CALLBACKS = ("begin", "after_create_session", "before_run", "after_run", "end", "on_error")
_BITS = {"begin": native.WrappedHook.overrides_begin,
         "after_create_session": native.WrappedHook.overrides_after_create_session,
         "before_run": native.WrappedHook.overrides_before_run,
         "after_run": native.WrappedHook.overrides_after_run,
         "end": native.WrappedHook.overrides_end,
         "on_error": native.WrappedHook.overrides_on_error,
         "_log_tensors": native.WrappedHook.overrides_log_tensors,
         "_log_and_record": native.WrappedHook.overrides_log_and_record,
         "_save": native.WrappedHook.overrides_save}


class WrapperAdapter(_Protocol, native.WrappedHook):
    """A Python subclass of a built-in hook: ``overrides`` (names from _BITS) run the subclass's
    methods, the other callbacks stay native. While one runs, the hook's ``_tw_call`` says which, with
    this wrapper and what the library passed, for the built-in's methods (TF's super() calls)."""

    def __init__(self, hook, owner, overrides):
        mask = 0
        for name in overrides:
            mask |= _BITS[name]
        native.WrappedHook.__init__(self, hook._native, mask, type(hook).__name__)
        self._bind(hook, owner)

    def begin(self, session_ref):
        with _Calling(self, "begin", session_ref):
            super().begin(session_ref)

    def after_create_session(self, session_ref):
        with _Calling(self, "after_create_session", session_ref):
            super().after_create_session(session_ref)

    def before_run(self, ctx):
        with _Calling(self, "before_run", ctx):
            super().before_run(ctx)

    def after_run(self, ctx):
        with _Calling(self, "after_run", ctx):
            super().after_run(ctx)

    def end(self, session_ref):
        with _Calling(self, "end", session_ref):
            super().end(session_ref)

    def on_error(self, session_ref, error_code):
        with _Calling(self, "on_error", session_ref):
            super().on_error(session_ref, error_code)

    def log_tensors(self, values):  # LoggingTensorHook._log_tensors(tensor_values)
        with _Calling(self, "_log_tensors", None):
            self._hook._log_tensors({t.name(): to_value(t) for t in values})

    def log_and_record(self, elapsed_steps, elapsed_time, global_step):  # StepCounterHook._log_and_record
        with _Calling(self, "_log_and_record", None):
            self._hook._log_and_record(elapsed_steps, elapsed_time, global_step)

    def save(self, session_ref, step):  # CheckpointSaverHook._save(session, step) → stop request
        with _Calling(self, "_save", session_ref):
            return bool(self._hook._save(self._owner.raw_session(session_ref), step))

    def _new_feeds(self, feed_dict):
        """What the subclass feeds beyond what the built-in fed already (through super().before_run)."""
        fed = self._hook._tw_fed
        return {k: v for k, v in feed_dict.items() if k not in fed} if feed_dict else None


class _Calling:
    """Sets the hook's ``_tw_call`` to (callback, wrapper, what the library passed) for the duration of
    a wrapper callback; the previous one comes back afterwards (an extension point runs inside one)."""

    __slots__ = ("_hook", "_call", "_previous")

    def __init__(self, wrapper, callback, argument):
        self._hook = wrapper._hook
        self._call = (callback, wrapper, argument)

    def __enter__(self):
        self._previous = self._hook._tw_call
        self._hook._tw_call = self._call
        self._hook._tw_fed = frozenset()

    def __exit__(self, *exc):
        self._hook._tw_call = self._previous
