"""A Python SessionRunHook inside the library's hook list (a SWIG director of the C++ facade's Hook).

It translates TF's hook protocol to the library's: SessionRunArgs become fetch requests and feeds,
results are rebuilt in the fetches' structure, and SessionRunContext.request_stop reaches the run.
Exceptions a hook raises come out of the session call unchanged; an AbortedError triggers recovery.
"""
import logging

from . import native
from ._fetches import FetchPlan
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues


class HookAdapter(native.Hook):
    def __init__(self, hook, owner):
        super().__init__(type(hook).__name__)
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
                self._plan.request(ctx)
            if args.feed_dict:
                state = self._owner._runner.state
                native.add_feeds(ctx, args.feed_dict, state.outputs)
                state.objects.update(args.feed_dict)
        self._forward_stop(run_context, ctx)

    def after_run(self, ctx):
        run_context = self._run_context(ctx)
        results = self._plan.results(ctx) if self._plan is not None else None
        self._hook.after_run(run_context, SessionRunValues(results))
        self._forward_stop(run_context, ctx)

    def end(self, session_ref):
        self._hook.end(self._owner.raw_session(session_ref))

    def on_error(self, session_ref, error_code):
        try:
            self._hook.on_error(self._owner.raw_session(session_ref), error_code)
        except Exception:  # on_error cannot fail the run it reports
            logging.getLogger("trainwatch").exception("%s.on_error raised", type(self._hook).__name__)

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
