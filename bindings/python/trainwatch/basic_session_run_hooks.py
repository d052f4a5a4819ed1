"""The built-in hooks of tf.train, each backed by the library's own implementation (no Python in the
run loop), plus CheckpointSaverListener and SecondOrStepTimer.

Signatures and defaults are TF's; trainwatch's additions are keyword-only.
"""
import logging
import time

from . import _paths, native
from ._raw_session import owner_of
from ._step import StepRunner, remember_fed
from ._fetches import FetchPlan, RunResults, is_fetches, is_pattern
from ._hook_adapter import CALLBACKS, WrapperAdapter
from .errors import NotFoundError
from .session_run_hook import SessionRunArgs, SessionRunHook
from .summary import FileWriter
from .tensors import to_value

_UNSET = native.UNSET
_UNSET_SECS = -1.0


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
    ``super()`` reaches — run the native hook's own callback of the same kind."""

    _native = None
    _tw_call = None          # (callback, wrapper, its session/run context) while a wrapper callback runs
    _tw_fed = frozenset()    # the feed names the built-in's before_run added in this call
    _EXTENSION_POINTS = ()   # TF's protected methods of this hook that a subclass may override

    def _handle_for(self, owner):
        """What ``owner``'s session lists: the native hook, or a wrapper running the overrides."""
        overrides = self._python_callbacks(owner)
        if "after_run" in overrides:  # its run_values come from the fetches of a Python before_run
            overrides.add("before_run")
        return WrapperAdapter(self, owner, overrides) if overrides else self._native

    def _python_callbacks(self, owner):
        """What the subclass overrides, compared with the built-in class it derives from."""
        del owner
        cls = type(self)
        builtin = next(c for c in cls.__mro__ if c.__module__ == __name__)
        return {name for name in CALLBACKS + self._EXTENSION_POINTS
                if getattr(cls, name) is not getattr(builtin, name)}

    def _super_call(self, callback):
        """(wrapper, session or run context) of the wrapper callback ``callback`` running now."""
        call = self._tw_call
        if call is None or call[0] != callback:
            raise RuntimeError(f"{type(self).__name__}.{callback}: the built-in {callback} runs only inside the "
                               f"session's call of {callback} (super().{callback}(...) in an override)")
        return call[1], call[2]

    def begin(self):
        wrapper, session = self._super_call("begin")
        wrapper.super_begin(session)

    def after_create_session(self, session, coord):
        wrapper, session = self._super_call("after_create_session")
        wrapper.super_after_create_session(session)

    def before_run(self, run_context):
        """Runs the built-in's before_run and returns what it requested, as TF's SessionRunArgs."""
        wrapper, ctx = self._super_call("before_run")
        already = len(ctx.requests())
        wrapper.super_before_run(ctx)
        _take_stop(run_context, ctx)
        args = self._run_args(ctx.requests()[already:])
        self._tw_fed = frozenset(args.feed_dict) if args is not None and args.feed_dict else frozenset()
        return args

    def after_run(self, run_context, run_values):
        """Runs the built-in's after_run: its check, logging or saving, and its stop request."""
        wrapper, ctx = self._super_call("after_run")
        wrapper.super_after_run(ctx)
        _take_stop(run_context, ctx)

    def end(self, session):
        wrapper, session = self._super_call("end")
        wrapper.super_end(session)

    def on_error(self, session, error_code):
        wrapper, session = self._super_call("on_error")
        wrapper.super_on_error(session, error_code)

    def _run_args(self, requested):
        """TF's SessionRunArgs for the names the built-in requested in this run."""
        return SessionRunArgs(list(requested)) if requested else None


def _take_stop(run_context, ctx):
    """A stop the built-in requested shows in the SessionRunContext the subclass holds."""
    if run_context is not None and ctx.stop_requested():
        run_context._stop_requested = True


class _GlobalStepArgs:
    """TF's hooks that fetch the global step on every run (SessionRunArgs(global_step_tensor))."""

    def _run_args(self, requested):
        del requested
        return SessionRunArgs("global_step")


class StopAtStepHook(_GlobalStepArgs, NativeHook):
    """Requests a stop after the run that brings global_step to ``last_step`` (or ``num_steps``
    after the session starts) (B11–B15)."""

    def __init__(self, num_steps=None, last_step=None):
        self._native = native.StopAtStepHook(_steps(num_steps), _steps(last_step))


class CheckpointSaverListener:
    """Interface for listeners of checkpoint saves (B17); every method is a no-op by default.
    ``after_save`` may return True to stop training."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


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


class CheckpointSaverHook(_GlobalStepArgs, NativeHook):
    """Saves ``<checkpoint_dir>/<checkpoint_basename>-<global_step>`` at session creation, every
    ``save_secs`` or ``save_steps``, and at the end (B18–B24): the session's variables and global_step,
    with the session's retention. Saves are asynchronous: the run stalls only to copy the variables.
    ``saver`` and ``scaffold`` are accepted for TF compatibility (not both, B18): the variables are the
    ones registered with the session (``Scaffold(variables=…)``). With listeners, the run that saves
    waits for the write and calls ``after_save`` there, so a listener's stop ends that run (TF's B22);
    ``deferred_listeners=True`` keeps the write in the background and calls them in a later run."""

    _EXTENSION_POINTS = ("_save",)

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None, save_graph_def=True,
                 *, async_checkpoint=True, deferred_listeners=False):
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
        self._listeners = [_ListenerAdapter(l) for l in (listeners or [])]
        self._native = native.CheckpointSaverHook(_paths.encode(checkpoint_dir, "checkpoint_dir"), options, native.ListenerVector(self._listeners))

    def _save(self, session, step):
        """TF's protected extension point: saves the checkpoint of ``step`` (listeners included) and
        returns whether a listener asked to stop; the hook requests the stop in after_run."""
        del session  # the session the hook was called with: the library's own
        wrapper, session_ref = self._super_call("_save")
        return wrapper.super_save(session_ref, int(step))


class _NanCallback(native.NanFunction):
    """on_nan(session, event) for NanTensorHook(action="callback")."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def on_nan(self, session_ref, event):
        self._fn(owner_of(session_ref).raw_session(session_ref), event)


class NanTensorHook(NativeHook):
    """Fails the run with NanLossDuringTrainingError when ``loss_tensor`` is NaN, or requests a stop
    with ``fail_on_nan_loss=False`` (B31–B34).

    trainwatch's additions (keyword-only) turn it into the full guard: ``watch`` more names or glob
    patterns ("grad/*"), ``action`` "fail", "stop", "rollback" (restore the newest good checkpoint
    written before the run that saw the NaN — one saved in that run is deleted first — and go on, at
    most ``max_rollbacks`` times) or "callback" (``on_nan(session, event)`` decides; raise
    to fail), ``detect_inf`` (default True with any addition; TF sees only NaN), ``every_n_steps``.
    Messages name the tensor, the step, the NaN/±Inf counts and the first bad index."""

    _ACTIONS = {"fail": native.TW_NAN_ACTION_FAIL, "stop": native.TW_NAN_ACTION_STOP,
                "callback": native.TW_NAN_ACTION_CALLBACK, "rollback": native.TW_NAN_ACTION_ROLLBACK}

    def __init__(self, loss_tensor, fail_on_nan_loss=True, *, watch=(), action=None, detect_inf=None,
                 every_n_steps=None, max_rollbacks=None, on_nan=None):
        self._loss_tensor = str(loss_tensor)
        if not watch and action is None and detect_inf is None and every_n_steps is None \
                and max_rollbacks is None and on_nan is None:
            self._native = native.NanTensorHook(str(loss_tensor), bool(fail_on_nan_loss))
            return
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
        self._callback = _NanCallback(on_nan) if on_nan is not None else None
        self._native = native.NanTensorHook(native.StringVector(names), options, self._callback)

    def _run_args(self, requested):
        """TF's SessionRunArgs(loss_tensor): run_values.results is the loss value itself."""
        if list(requested) == [self._loss_tensor]:
            return SessionRunArgs(self._loss_tensor)
        return super()._run_args(requested)


class _Formatter(native.LogFormatter):
    """LoggingTensorHook's formatter(dict tag → value) → str in the library (a SWIG director)."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def format(self, values):
        return str(self._fn({t.name(): to_value(t) for t in values}))


class LoggingTensorHook(NativeHook):
    """Logs the values named in ``tensors`` (a list of names, or a dict tag → name printed sorted by
    tag) every ``every_n_iter`` runs or ``every_n_secs`` seconds and/or at the end (B6–B10), as
    "tag = value, … (0.123 sec)" at INFO on the "trainwatch" logger. ``formatter(dict tag → value)``
    may write the text instead."""

    _EXTENSION_POINTS = ("_log_tensors",)

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        if isinstance(tensors, dict):
            tags, names = zip(*tensors.items()) if tensors else ((), ())
        elif isinstance(tensors, str):
            tags, names = (), (tensors,)
        else:
            tags, names = (), tuple(tensors)
        options = _timer_options(every_n_iter, every_n_secs)
        options.set_int64(native.TW_OPT_LOG_AT_END, int(bool(at_end)))
        self._tensors = {str(t): str(n) for t, n in zip(tags or names, names)}  # tag → name, TF's order
        self._formatter = _Formatter(formatter) if formatter is not None else None
        self._native = native.LoggingTensorHook(native.StringVector([str(n) for n in names]),
                                                native.StringVector([str(t) for t in tags]), options, self._formatter)

    def _run_args(self, requested):
        """TF's SessionRunArgs(tag → tensor) on the runs that log."""
        return SessionRunArgs(dict(self._tensors)) if requested else None

    def _log_tensors(self, tensor_values):
        """TF's protected extension point: called with tag → value when the hook logs; the built-in
        formats and logs them (and moves the timer: an override that skips it is called every run)."""
        wrapper, _ = self._super_call("_log_tensors")
        held = native.TensorSet()
        held.add_dict(tensor_values, False, "value")
        wrapper.super_log_tensors(held.tensors())


class StepCounterHook(_GlobalStepArgs, NativeHook):
    """Logs "global_step/sec: <rate>" every ``every_n_steps`` steps (or ``every_n_secs`` seconds: pass
    every_n_steps=None, B26) and writes it as a summary to ``output_dir`` or ``summary_writer``."""

    _EXTENSION_POINTS = ("_log_and_record",)

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        self._writer = _writer(summary_writer)
        self._native = native.StepCounterHook(_steps(every_n_steps), _secs(every_n_secs),
                                              "" if output_dir is None else _paths.encode(output_dir, "output_dir"), self._writer)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        """TF's protected extension point: logs "global_step/sec: <rate>" and writes it as a summary."""
        wrapper, _ = self._super_call("_log_and_record")
        wrapper.super_log_and_record(int(elapsed_steps), float(elapsed_time), int(global_step))


class SummarySaverHook(NativeHook):
    """Writes TensorBoard summaries every ``save_steps`` steps or ``save_secs`` seconds (B35–B40):
    scalars for one-element values, histograms for larger ones. ``summary_op`` names the values (names
    or glob patterns of published outputs and variables); with ``scaffold`` instead, every published
    value is summarised (the step publishes what TensorBoard should show)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        names = [] if summary_op is None else [summary_op] if isinstance(summary_op, str) else list(summary_op)
        options = _timer_options(save_steps, save_secs)
        if output_dir is not None:
            options.set_string(native.TW_OPT_OUTPUT_DIR, _paths.encode(output_dir, "output_dir"))
        self._writer = _writer(summary_writer)
        self._native = native.SummarySaverHook(native.StringVector([str(n) for n in names]), options, self._writer)

    def _run_args(self, requested):
        """TF's SessionRunArgs({"global_step": …, "summary": …}), the summary only on the runs that save."""
        fetches = {"global_step": "global_step"}
        if requested:
            fetches["summary"] = list(requested)
        return SessionRunArgs(fetches)


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


class FeedFnHook(NativeHook):
    """Feeds what ``feed_fn()`` returns (a dict name → array) into every run (B44); TF's conflict rules
    apply (H22/H23). The step sees the very objects returned."""

    def __init__(self, feed_fn):
        self._feed_fn = _FeedFunction(feed_fn)
        self._native = native.FeedFnHook(self._feed_fn)

    def _run_args(self, requested):
        """TF's SessionRunArgs(fetches=None, feed_dict=feed_fn())."""
        del requested
        return SessionRunArgs(None, self._feed_fn.last)


class FinalOpsHook(NativeHook):
    """Evaluates ``final_ops`` once at the end (B43); ``final_ops_values`` is None until then.

    ``final_ops`` is a step function — called without hooks with ``final_ops_feed_dict``; the values
    are then a dict name → what it published — or, as in TF, fetches: a name or a nesting of names of
    registered variables, "global_step" (read at the end) and published outputs (their values in the
    last run, which this hook fetches on every run: nothing is published between runs); the values
    then mirror that structure."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._plan = None
        if callable(final_ops):
            self._step = StepRunner(None, final_ops)
        elif is_fetches(final_ops):
            if final_ops_feed_dict:
                raise ValueError("final_ops_feed_dict feeds a step function; final_ops are names here")
            self._plan = FetchPlan(final_ops)
            self._outputs = ()  # the names only a run answers, known once the session's variables are
            self._last = {}     # their values in the last run
            self._values = None
            self._step = StepRunner(None, self._read_final)
        else:
            raise TypeError("final_ops must be a step function (StepContext → dict of outputs) or names (str) in "
                            f"lists, tuples or dicts; got {type(final_ops).__name__}")
        feeds = native.TensorSet()
        feeds.add_dict(dict(final_ops_feed_dict or {}), False, "feed")
        self._native = native.FinalOpsHook(self._step, feeds.tensors())  # feeds are copied

    @property
    def final_ops_values(self):
        if not self._native.has_values():
            return None
        if self._plan is not None:
            return self._values
        return {t.name(): to_value(t) for t in self._native.values()}

    def _python_callbacks(self, owner):
        callbacks = super()._python_callbacks(owner)
        if self._plan is not None:
            self._outputs = [n for n in self._plan.names if n != "global_step" and n not in owner._variables]
            if self._outputs:
                callbacks |= {"before_run", "after_run"}
        return callbacks

    def before_run(self, run_context):
        args = super().before_run(run_context)
        return SessionRunArgs(list(self._outputs)) if self._plan is not None and self._outputs else args

    def after_run(self, run_context, run_values):
        super().after_run(run_context, run_values)
        if self._plan is not None and self._outputs:
            results = RunResults(self._super_call("after_run")[1])
            try:
                self._last = {name: results.matching(name) if is_pattern(name) else results.value(name)
                              for name in self._outputs}
            except NotFoundError:  # a subclass's before_run requested other names
                self._last = {}

    def _read_final(self, step_context):
        session = step_context.session
        last = self._last
        source = _FinalValues(lambda name: last[name] if name in last else session.run(name))
        self._values = self._plan.results(source)


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


class GlobalStepWaiterHook(NativeHook):
    """Delays the start of training until the global step reaches ``wait_until_step`` (B41–B42),
    polling every ``poll_secs`` (0.5). trainwatch's additions: ``max_wait_secs`` bounds the wait
    (DeadlineExceededError), and ``global_step_fn(session)`` reads a shared step another process
    advances (default: the session's own)."""

    def __init__(self, wait_until_step, *, poll_secs=None, max_wait_secs=None, global_step_fn=None):
        options = native.Options()
        if poll_secs is not None:
            options.set_double(native.TW_OPT_WAIT_POLL_SECS, float(poll_secs))
        if max_wait_secs is not None:
            options.set_double(native.TW_OPT_WAIT_MAX_SECS, float(max_wait_secs))
        self._fn = _GlobalStepFunction(global_step_fn) if global_step_fn is not None else None
        self._native = native.GlobalStepWaiterHook(int(wait_until_step), options, self._fn)


class ProfilerHook(NativeHook):
    """Every ``save_steps`` steps or ``save_secs`` seconds (never on the first run) writes
    ``<output_dir>/timeline-<step>.json``, a Chrome trace of one run: each hook's before_run/after_run
    and the step function (B45–B47). ``show_dataflow``/``show_memory`` have nothing to show without a
    graph."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        del show_dataflow, show_memory
        self._native = native.ProfilerHook(_steps(save_steps), _secs(save_secs), _paths.encode(output_dir, "output_dir"))


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (B1–B5), for hooks written
    in Python. (The library's hooks use their own timer; this one has no native counterpart.)"""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Marks ``step`` triggered; returns (elapsed_secs, elapsed_steps) since the last trigger, or
        (None, None) the first time."""
        now = time.time()
        elapsed = (None, None) if self._last_triggered_time is None else (
            now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step
