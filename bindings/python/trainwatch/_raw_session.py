"""The session as callbacks see it: TF's raw ``tf.Session``.

Hooks, listeners, init functions and step functions get a RawSession: it runs steps without hooks,
reads values by name (``run(fetches)``), reads and sets the global step, hands out the registered variables and requests a stop. It stays safe
to keep: once its MonitoredSession is gone, every call raises instead of touching freed memory.
"""
import threading
import weakref

from . import native
from ._fetches import read

_by_address = weakref.WeakValueDictionary()  # native session address → its MonitoredSession
_creating = threading.local()  # the MonitoredSession whose native session is being created


def owner_of(session_ref):
    """The MonitoredSession a native SessionRef (received by a callback) belongs to."""
    owner = getattr(_creating, "owner", None)  # callbacks during creation belong to that session
    if owner is None:
        owner = _by_address.get(session_ref.address())
    if owner is None:
        raise RuntimeError("a trainwatch callback ran for a session this process does not know")
    return owner


class creating:
    """Marks ``owner`` as the session being created on this thread (callbacks run before it is known)."""

    def __init__(self, owner):
        self._owner = owner

    def __enter__(self):
        self._previous = getattr(_creating, "owner", None)
        _creating.owner = self._owner

    def __exit__(self, *exc):
        _creating.owner = self._previous


def _open_sessions():
    """The MonitoredSessions of this process that may be inside a call now: the one being created on
    this thread first, then every created one (closed ones included; they say so themselves)."""
    creating_now = getattr(_creating, "owner", None)
    sessions = [creating_now] if creating_now is not None else []
    return sessions + [owner for owner in list(_by_address.values()) if owner is not creating_now]


def register(owner, session_ref):
    _by_address[session_ref.address()] = owner


def unregister(session_ref):
    _by_address.pop(session_ref.address(), None)


class RawSession:
    """The session hooks and step functions receive (TF's raw ``tf.Session``): ``run`` reads values by
    name or runs a step without hooks."""

    def __init__(self, owner, session_ref):
        """Made by the session (not by callers).

        Args:
          owner: the MonitoredSession.
          session_ref: the library's reference to its session.
        """
        self._owner = owner
        self._ref = native.SessionRef(session_ref)  # a copy: the callback's reference dies with the call

    def _session(self):
        if not self._owner._alive:
            raise RuntimeError("Session is closed.")
        return self._ref

    def run(self, fetches, feed_dict=None):
        """Reads values by name, or runs a step without hooks.

        Args:
          fetches: a name or any nesting of names of registered variables, outputs published in the
            run in progress, or "global_step" (TF's ``session.run(global_step_tensor)``); or a step
            function, run without hooks and without changing the global step (evaluation, resets).
            In a hook's ``end``, an output reads as of the last run if a hook fetched it then.
          feed_dict: feeds for the step function.

        Returns:
          The values in the structure of ``fetches``, or what the step function returned.

        Raises:
          NotFoundError: a name matches nothing.
          RuntimeError: the session is closed.
        """
        if callable(fetches):
            return self._owner._run_step(self._session().run_without_hooks, fetches, feed_dict, nested=True)
        return read(self._session(), fetches, feed_dict, self._owner._values_for_end())

    @property
    def global_step(self):
        """The global step now (an int)."""
        return self._session().global_step()

    def set_global_step(self, value):
        """Sets the global step.

        Args:
          value: the new global step.
        """
        self._session().set_global_step(int(value))

    @property
    def variables(self):
        """The registered variables: name → the very array that was registered."""
        return dict(self._owner._variables)

    def should_stop(self):
        """Whether a stop was requested or the session is closed."""
        return not self._owner._alive or self._session().should_stop()

    def request_stop(self):
        """Requests a stop after the run in progress."""
        self._session().request_stop()

    @property
    def is_chief(self):
        """Whether this session is the chief."""
        return self._session().is_chief()
