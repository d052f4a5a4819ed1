"""tf.train.SessionRunHook and the values it exchanges with a session (H1–H5).

Subclass SessionRunHook and override what you need; a MonitoredSession calls it from the library's
run loop. Fetches are names (an output the step function published, a variable, or "global_step"), in
any nesting of lists, tuples and dicts; results come back in the same structure, as tf.Session.run
returns them (numpy arrays; numpy scalars for 0-d values).
"""
from typing import Any, NamedTuple


class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run(). Every method is a no-op by default (H1)."""

    def begin(self):
        """Called once, before the session is created."""

    def after_create_session(self, session, coord):
        """Called after every (re-)creation of the session (H8): ``session`` runs steps without hooks,
        ``coord`` can request a stop."""

    def before_run(self, run_context):
        """Called before each run; may return SessionRunArgs(fetches, feed_dict) or None."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each successful run; ``run_values.results`` mirror this hook's fetches."""

    def end(self, session):
        """Called when the session closes cleanly (not after a failed run)."""

    def on_error(self, session, error_code):
        """trainwatch's addition: called instead of ``end`` when a run failed (``error_code`` is the
        status, e.g. ``trainwatch.NanLossDuringTrainingError.error_code``). It cannot fail."""


class SessionRunArgs(NamedTuple):
    """What a hook asks of a run (H2): fetches (names, any nesting), feed_dict (name → array), options."""

    fetches: Any
    feed_dict: Any = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What a hook gets after a run (H3): results in the structure of its fetches."""

    results: Any
    options: Any = None
    run_metadata: Any = None


class SessionRunContext:
    """The run being made (H4): the caller's arguments, the session, and a way to request a stop.
    One object per run, shared by every hook (H5)."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Stops the loop after this run: takes effect once every hook's after_run ran (H11)."""
        self._stop_requested = True
