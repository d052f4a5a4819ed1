"""Running a Python step function inside the library's run, and the StepContext it receives.

The step function's dict of outputs is published zero copy; the arrays (and the feeds) are kept alive
until the run returns, then released.
"""
import threading
from fnmatch import fnmatchcase

from . import native

_EVERY_VALUE = "*"  # the request for every published value (SummarySaverHook without summary_op)


_fed = threading.local()  # feeds a FeedFnHook returned on this thread: name → (address, object)


def remember_fed(name, address, value):
    """Lets the step see the object a FeedFnHook fed (not a view of its memory)."""
    if not hasattr(_fed, "objects"):
        _fed.objects = {}
    _fed.objects[name] = (address, value)


def fed_object(tensor):
    """The object fed as ``tensor`` by a FeedFnHook, or a numpy view of its memory (a copy on its
    device for a device tensor)."""
    address, value = getattr(_fed, "objects", {}).get(tensor.name(), (None, None))
    if address == tensor.address():
        return value
    if tensor.on_device():
        from .devices import copy_of
        return copy_of(tensor)
    return native.as_numpy(tensor, None)


class RunState:
    """What one run keeps alive: the caller's feeds, hook feeds, published outputs, and the
    SessionRunContext shared by the Python hooks of the run (H5)."""

    __slots__ = ("feeds", "outputs", "objects", "run_context", "used")

    def __init__(self):
        self.feeds = native.TensorSet()      # the caller's feed_dict
        self.outputs = native.TensorSet()    # published outputs and hook feeds
        self.objects = {}                    # feed name → the Python object fed
        self.run_context = None
        self.used = False

    def clear(self):
        if self.used:
            self.feeds.clear()
            self.outputs.clear()
            self.objects.clear()
            self.run_context = None
            self.used = False


# What a step ported from TF might return meaning "fetch these" (a name, a list or tuple of tensors):
# silently ignoring it would hide the bug. Any other value is returned from run() as TF's run_step_fn
# returns step_fn's value (W22); None publishes nothing.
_FETCH_LIKE = (str, bytes, list, tuple)


class StepRunner(native.StepFunction):
    """Calls the Python step function from the library (a SWIG director). ``owner`` is the
    MonitoredSession, or None to find it from the first run (a hook's own step, FinalOpsHook)."""

    def __init__(self, owner, fn=None):
        super().__init__()
        self.owner = owner
        self.state = RunState()
        self.fn = fn
        self.ctx = None
        self.result = None

    def run(self, ctx):
        self.ctx = ctx
        if self.owner is None:
            from ._raw_session import owner_of
            self.owner = owner_of(ctx.session())
        try:
            try:
                result = self.fn(StepContext(self))
            finally:
                # Before the library touches the variables again (fetches, saves, a rollback, the
                # restore of a recovery): the run's only check, as no Python code runs before the step
                # that could hand the library a moved variable.
                self.owner._check_variables()
            if isinstance(result, _FETCH_LIKE):
                raise TypeError(
                    "a step function returns a dict of outputs to publish (name -> numpy array, torch tensor "
                    f"or number) or None, not {type(result).__name__}: a step does not fetch names (session.run(fetches) "
                    "reads variables and global_step)")
            if isinstance(result, dict) and result:
                native.publish_outputs(ctx, result, self.state.outputs)
                self.state.used = True
            self.result = result
        finally:
            self.ctx = None


class StepContext:
    """What a step function receives: the run's feeds, the names hooks requested, the global step,
    the session (to run without hooks) and request_stop()."""

    __slots__ = ("_runner",)

    def __init__(self, runner):
        """Made by the session for each run (not by callers).

        Args:
          runner: the session's runner of the step function.
        """
        self._runner = runner

    def _ctx(self):
        ctx = self._runner.ctx
        if ctx is None:
            raise RuntimeError("a StepContext is only valid while its step function runs")
        return ctx

    @property
    def feeds(self):
        """name → value of this run's feeds: the very objects the caller and hooks fed; other feeds as
        numpy views valid during the step."""
        ctx = self._ctx()
        objects = self._runner.state.objects
        return {t.name(): objects[t.name()] if t.name() in objects else fed_object(t) for t in ctx.feeds()}

    @property
    def requested(self):
        """The names and patterns hooks asked for in this run: publish at least these. "*" (every
        published value, what the default SummarySaverHook asks for on its saving runs) is among them
        when requested; ``explicitly_requested`` leaves it out."""
        return tuple(self._ctx().requested())

    # W29
    @property
    def explicitly_requested(self):
        """``requested`` without "*": the names and narrower patterns hooks asked for."""
        return tuple(name for name in self._ctx().requested() if name != _EVERY_VALUE)

    def is_requested(self, name, explicitly=False):
        """Returns whether a hook asked for ``name`` in this run, by name or through a pattern.

        Args:
          name: an output name.
          explicitly: leave out a request for every value ("*", what the default SummarySaverHook
            asks for on its saving runs), so that a step computes a value only when some hook needs it.
        """
        ctx = self._ctx()
        if not explicitly or not ctx.is_requested(_EVERY_VALUE):
            return ctx.is_requested(name)
        return any(fnmatchcase(name, pattern) for pattern in self.explicitly_requested)

    @property
    def global_step(self):
        """global_step at the start of this run."""
        return self._ctx().global_step()

    def set_global_step(self, value):
        """Sets the global step the run ends with, instead of the automatic +1.

        Args:
          value: the new global step, applied when the step succeeds.
        """
        self._ctx().set_global_step(int(value))

    @property
    def session(self):
        """The session, to run steps without hooks (TF's step_context.session)."""
        return self._runner.owner.raw_session()

    def request_stop(self):  # W21, W23
        """Ends the step and the loop at once, as TF's ``StepContext.request_stop()``.

        Raises:
          StopIteration: always; the session catches it and stops.
        """
        self._ctx()
        raise StopIteration("step_fn has requested the iterations to stop.")
