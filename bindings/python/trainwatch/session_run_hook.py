"""tf.train.SessionRunHook and the values it exchanges with a session.

Subclass SessionRunHook and override what you need; a MonitoredSession calls it from the library's
run loop. Fetches are names (an output the step function published, a variable, or "global_step"), in
any nesting of lists, tuples and dicts; results come back in the same structure, as tf.Session.run
returns them (numpy arrays; numpy scalars for 0-d values).
"""
from typing import Any, NamedTuple


# H1–H5, H8, H11
class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run(). Every method does nothing by default."""

    def begin(self):
        """Called once before using the session (before it is created)."""

    def after_create_session(self, session, coord):
        """Called when a new session is created, and again after every recovery.

        Args:
          session: the ``RawSession``: runs steps without hooks, reads values by name.
          coord: a ``Coordinator`` that can request a stop.
        """

    def before_run(self, run_context):
        """Called before each call to run().

        Args:
          run_context: a ``SessionRunContext``: the caller's arguments, the session, request_stop.

        Returns:
          None, or a ``SessionRunArgs`` with the names to fetch and the feeds to add to this run.
        """
        return None

    def after_run(self, run_context, run_values):
        """Called after each successful call to run().

        Args:
          run_context: the ``SessionRunContext`` given to ``before_run``.
          run_values: a ``SessionRunValues``: ``results`` mirror this hook's fetches.
        """

    def end(self, session):
        """Called at the end of the session, when it closes cleanly (not after a failed run).

        Args:
          session: the ``RawSession``.
        """

    def on_error(self, session, error_code):
        """trainwatch's addition: called instead of ``end`` when a run failed. It cannot fail: what
        it raises is logged.

        Args:
          session: the ``RawSession``.
          error_code: the failure's status, e.g. ``trainwatch.NanLossDuringTrainingError.error_code``.
        """


class SessionRunArgs(NamedTuple):
    """Represents arguments to be added to a run() call: ``fetches`` (names, any nesting),
    ``feed_dict`` (name → array), ``options`` (accepted; there are no RunOptions)."""

    fetches: Any
    feed_dict: Any = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """Contains the results of a run: ``results`` in the structure of the hook's fetches."""

    results: Any
    options: Any = None
    run_metadata: Any = None


class SessionRunContext:
    """Provides information about the run() call being made: the caller's arguments, the session,
    and a way to request a stop. One object per run, shared by every hook."""

    def __init__(self, original_args, session):
        """Initializes a SessionRunContext (a test may build one to drive a hook by hand).

        Args:
          original_args: the ``SessionRunArgs`` of the caller's run (its step function, feeds).
          session: the ``RawSession`` the hooks use.
        """
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        """The ``SessionRunArgs`` of the caller's run()."""
        return self._original_args

    @property
    def session(self):
        """The ``RawSession``: reads values by name, runs steps without hooks."""
        return self._session

    @property
    def stop_requested(self):
        """Whether a stop was requested in this run."""
        return self._stop_requested

    def request_stop(self):
        """Requests that the loop stop after this run, once every hook's after_run ran."""
        self._stop_requested = True
