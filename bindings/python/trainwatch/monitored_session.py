"""tf.train's sessions: MonitoredSession, SingularMonitoredSession, MonitoredTrainingSession, the
session creators and Scaffold.

A session runs the caller's step function: ``sess.run(step_fn, feed_dict=None)`` calls every hook's
before_run, then ``step_fn(step_context)``, then every hook's after_run, and returns what the step
returned. ``sess.run(fetches)`` with names instead reads values (variables, "global_step") without a
step, as ``session.run(tensor)`` in TF. A step returns a dict of outputs (name → array, published zero copy for hooks to fetch), raises
StopIteration / OutOfRangeError at the end of its data, or AbortedError to trigger recovery.

TF's graph arguments (master, config, stop_grace_period_secs, save_graph_def) are accepted and have
nothing to act on.
"""
from . import _paths, native, shard
from .distributed import _configure as _configure_distributed, _rank_of
from ._fetches import read
from ._hook_adapter import HookAdapter
from ._raw_session import Coordinator, RawSession, creating, owner_of, register, unregister
from ._step import StepRunner
from .basic_session_run_hooks import NativeHook
from .checkpoint import Saver, load_variable
from .errors import OutOfRangeError
from .session_run_hook import SessionRunHook


class Scaffold:
    """What a chief needs to build the model state: ``variables`` (name → array or trainwatch.Shard,
    registered zero copy for checkpoints and fetches), ``init_fn(scaffold, session)`` called when nothing was restored, and
    an optional ``saver`` (a trainwatch.Saver) whose variables and retention the session adopts."""

    def __init__(self, init_fn=None, variables=None, saver=None):
        if saver is not None and not isinstance(saver, Saver):
            raise TypeError(f"saver must be a trainwatch.Saver; got {type(saver).__name__}")
        if variables is None and saver is not None:
            variables = saver.variables
        if variables is not None and not isinstance(variables, dict):
            raise TypeError(f"variables must be a dict of name → array; got {type(variables).__name__}")
        self.init_fn = init_fn
        self.variables = dict(variables or {})
        self.saver = saver

    def finalize(self):
        """Nothing to freeze without a graph; kept for TF code that calls it."""
        return self


class _InitFunction(native.InitFunction):
    """Scaffold.init_fn(scaffold, session) in the library (a SWIG director)."""

    def __init__(self, fn, scaffold):
        super().__init__()
        self._fn = fn
        self._scaffold = scaffold

    def run(self, session_ref):
        self._fn(self._scaffold, owner_of(session_ref).raw_session(session_ref))


class _SessionCreator:
    """The options a session is created from: who restores or waits, what the variables are."""

    def __init__(self, scaffold, is_chief):
        if scaffold is not None and not isinstance(scaffold, Scaffold):
            raise TypeError(f"scaffold must be a trainwatch.Scaffold; got {type(scaffold).__name__}")
        self.scaffold = scaffold or Scaffold()
        self._is_chief = is_chief
        saver = self.scaffold.saver
        # Checkpoint retention (max_to_keep, keep_checkpoint_every_n_hours, recycle_files): the saver's,
        # else the defaults.
        self.retention = (saver.max_to_keep, saver.keep_checkpoint_every_n_hours, saver.recycle_files) if saver else None

    def _options(self, owner):
        """Native options for ``owner``'s session; what they borrow is kept alive by ``owner``."""
        options = native.Options()
        options.set_int64(native.TW_OPT_IS_CHIEF, int(self._is_chief))
        # A failed registration is kept on the options (and reported by the owner once its session is
        # created, or has failed to be: in a job, every rank's creation fails with it, D1).
        variables, owner._registration_failure = shard.register_or_record(self.scaffold.variables, options)
        owner._keep_alive(variables)
        owner._registered = variables
        if self.retention is not None:
            options.set_int64(native.TW_OPT_MAX_TO_KEEP, self.retention[0])
            options.set_double(native.TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS, self.retention[1])
            options.set_int64(native.TW_OPT_CHECKPOINT_RECYCLE_FILES, int(self.retention[2]))
        init_fn = self._init_fn()
        if init_fn is not None:
            adapter = _InitFunction(init_fn, self.scaffold)
            options.set_init_fn(adapter)
            owner._keep_alive(adapter)
        return options

    def _init_fn(self):
        return self.scaffold.init_fn


class ChiefSessionCreator(_SessionCreator):
    """The chief restores the newest good checkpoint of ``checkpoint_dir`` (or the file
    ``checkpoint_filename_with_path``), or else runs the scaffold's init_fn (S1, S5, S7)."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        del master, config
        if checkpoint_dir is not None and checkpoint_filename_with_path is not None:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        super().__init__(scaffold, is_chief=True)
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_filename_with_path = checkpoint_filename_with_path

    def _options(self, owner):
        options = super()._options(owner)
        if self.checkpoint_dir is not None:
            options.set_string(native.TW_OPT_CHECKPOINT_DIR, _paths.encode(self.checkpoint_dir, "checkpoint_dir"))
        return options

    def _init_fn(self):
        path = self.checkpoint_filename_with_path
        if path is None:
            return self.scaffold.init_fn

        def restore_file(scaffold, session):  # restoring a given file replaces initialization (S5, S7)
            Saver(scaffold.variables).restore(path)
            session.set_global_step(int(load_variable(path, "global_step")))
        return restore_file


class WorkerSessionCreator(_SessionCreator):
    """A worker waits (up to ``max_wait_secs``) for the chief instead of restoring (S2, S10)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        del master, config
        super().__init__(scaffold, is_chief=False)
        self.max_wait_secs = max_wait_secs

    def _options(self, owner):
        options = super()._options(owner)
        options.set_double(native.TW_OPT_MAX_WAIT_SECS,
                           -1.0 if self.max_wait_secs is None else float(self.max_wait_secs))
        return options


class _MonitoredSession:
    """The shared body of MonitoredSession and SingularMonitoredSession."""

    def __init__(self, session_creator, hooks, kind, chief_only_hooks=None, distributed=None):
        hooks, chief_only_hooks = list(hooks or []), list(chief_only_hooks or [])
        for hook in hooks + chief_only_hooks:
            if not isinstance(hook, SessionRunHook):
                raise TypeError(f"hooks must be SessionRunHook instances; got {type(hook).__name__}")
        self._hooks = hooks + chief_only_hooks
        self._native = None
        self._alive = True
        self._raw = None
        self._coordinator = None
        self._held = []
        self._registered = None  # the variables' TensorSet, checked before every use
        self._registration_failure = None  # this rank's, raised once the job has heard of it
        self._variables = shard.arrays(session_creator.scaffold.variables)
        self._runner = StepRunner(self)
        self._current_step_fn = None
        self._current_feed_dict = None
        options = session_creator._options(self)
        failure = self._registration_failure
        if failure is not None and (distributed is None or distributed["collective"] is None):
            self._alive = False
            raise failure  # alone: nobody waits for this process
        if distributed is not None:
            _configure_distributed(options, **distributed)
        handles = [self._handle(hook) for hook in hooks]
        chief_only_handles = [self._handle(hook) for hook in chief_only_hooks]
        self._handles = handles + chief_only_handles
        try:
            with creating(self):
                # With a failed registration this fails on every rank of the job, naming this one (D1).
                self._native = native.Session(kind, options, native.HookVector(handles),
                                              native.HookVector(chief_only_handles))
        except BaseException as error:
            self._alive = False
            if failure is not None:
                shard.raise_registration_failure(failure, error)
            raise
        register(self, self._native)

    # -- the TF API -----------------------------------------------------------------------------

    def run(self, fetches, feed_dict=None):
        """``run(step_fn)``: one step with hooks: before_run → ``step_fn(step_context)`` → after_run.
        Returns what ``step_fn`` returned; its dict of outputs is published for the hooks. A step
        returning None publishes nothing; one returning a str, bytes, list or tuple (TF-style fetches,
        which a step does not fetch) fails the run with TypeError.
        ``run(fetches)`` — a name or any nesting of names of registered variables or "global_step" —
        returns their values without running a step and without hooks."""
        if self._native is None:
            raise RuntimeError("Session is closed.")
        if not callable(fetches):
            return read(self._native, fetches, feed_dict)
        step_fn = fetches
        self._current_step_fn = step_fn
        self._current_feed_dict = feed_dict
        try:
            return self._run_step(self._native.run, step_fn, feed_dict)
        finally:
            self._current_step_fn = self._current_feed_dict = None

    def run_step_fn(self, step_fn):
        """TF's name for run(step_fn) (W22)."""
        return self.run(step_fn)

    def run_without_hooks(self, step_fn, feed_dict=None):
        """One step without hooks and without touching global_step, with recovery."""
        if self._native is None:
            raise RuntimeError("Session is closed.")
        return self._run_step(self._native.run_without_hooks, step_fn, feed_dict, nested=True)

    def should_stop(self):
        return self._native is None or self._native.should_stop()

    def request_stop(self):
        self._session().request_stop()

    def close(self):
        """end() on every hook (unless a run failed), then releases the session (H17, W17, W18)."""
        session = self._session()
        self._check_variables()  # end() may save them
        session.close()

    @property
    def global_step(self):
        return self._session().global_step()

    @property
    def preempted(self):
        """True once the session stopped because of a preemption (a caught SIGTERM/SIGUSR1, or
        notify_preemption on any rank): every rank stopped at the same step and the chief saved a
        checkpoint there. It stays True after close, so a launcher can requeue the job."""
        return self._native is not None and self._native.preempted()

    def notify_preemption(self):
        """Notes a preemption learnt another way (a cloud's metadata server): the job stops, with a
        checkpoint, at the end of the run in progress or the next one. Any thread."""
        self._session().notify_preemption()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        # H15/H16: only these exact types end the loop cleanly; anything else skips end().
        if exception_type in (OutOfRangeError, StopIteration):
            exception_type = None
        if exception_type is None:
            self.close()
        else:
            self._abandon()
        return exception_type is None

    # -- what callbacks and the rest of the package use -------------------------------------------

    def raw_session(self, session_ref=None):
        """The RawSession callbacks receive (created from the first reference a callback saw)."""
        if self._raw is None:
            self._raw = RawSession(self, session_ref if session_ref is not None else self._native)
        return self._raw

    def coordinator(self):
        if self._coordinator is None:
            self._coordinator = Coordinator(self.raw_session())
        return self._coordinator

    def _handle(self, hook):
        return hook._handle_for(self) if isinstance(hook, NativeHook) else HookAdapter(hook, self)

    def _session(self):
        if self._native is None:
            raise RuntimeError("Session is closed.")
        return self._native

    def _keep_alive(self, value):
        self._held.append(value)

    def _check_variables(self):
        """ValueError if a registered variable was resized or reallocated: the library would then
        read or write freed memory (numpy resize(refcheck=False), torch resize_())."""
        if self._registered is not None:
            self._registered.check_unchanged()

    def _abandon(self):
        """Destroys the native session without end() (TF's exit on a foreign exception)."""
        self._alive = False
        if self._native is not None:
            unregister(self._native)
            self._native = None

    def _run_step(self, run_native, step_fn, feed_dict, nested=False):
        runner = StepRunner(self) if nested else self._runner
        state = runner.state
        runner.fn = step_fn
        try:
            if feed_dict:
                state.feeds.add_dict(feed_dict, False, "feed")
                state.objects.update(feed_dict)
                state.used = True
                run_native(runner, state.feeds.tensors())
            else:
                run_native(runner)
            return runner.result
        finally:
            runner.fn = runner.result = None
            state.clear()


def _distributed(collective, collective_timeout_secs, vote_every_n_runs, restore_via_broadcast,
                 catch_preemption_signals):
    return {"collective": collective, "timeout_secs": collective_timeout_secs,
            "vote_every_n_runs": vote_every_n_runs, "restore_via_broadcast": restore_via_broadcast,
            "catch_preemption_signals": catch_preemption_signals}


class MonitoredSession(_MonitoredSession):
    """Session with hooks and recovery (W1, W28): AbortedError/UnavailableError anywhere in a run
    re-create the session (restoring the latest checkpoint) and retry the run.

    Many processes (trainwatch.distributed): ``collective`` (a TorchCollective, MPICollective or your
    own) makes the ranks agree on the restored step, stop, NaN, recovery and preemption; without a
    session_creator, rank 0 is the chief and the others workers. ``collective_timeout_secs`` bounds
    every collective operation (None: no limit), ``vote_every_n_runs`` sets the vote's cadence,
    ``restore_via_broadcast`` has the chief send the restored variables to ranks without its file
    system. ``catch_preemption_signals`` (also without a collective) notes SIGTERM/SIGUSR1 and ends the
    job at the end of the run in progress with a checkpoint on every rank at the same step."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120, collective=None,
                 collective_timeout_secs=600.0, vote_every_n_runs=1, restore_via_broadcast=False,
                 catch_preemption_signals=False):
        del stop_grace_period_secs
        if session_creator is None:
            chief = collective is None or _rank_of(collective) == 0
            session_creator = ChiefSessionCreator() if chief else WorkerSessionCreator()
        super().__init__(session_creator, hooks, native.Session.monitored,
                         distributed=_distributed(collective, collective_timeout_secs, vote_every_n_runs,
                                                  restore_via_broadcast, catch_preemption_signals))


class SingularMonitoredSession(_MonitoredSession):
    """Session with hooks and no recovery, always a chief (W26, W27)."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        del stop_grace_period_secs
        creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path)
        super().__init__(creator, hooks, native.Session.singular)

    def raw_session(self, session_ref=None):
        return super().raw_session(session_ref) if self._alive else None


class _UseDefault:
    def __repr__(self):
        return "USE_DEFAULT"


USE_DEFAULT = _UseDefault()  # TF's "argument left at its default", distinct from None (T1, T2)


class _TrainingSessionCreator(_SessionCreator):
    """MonitoredTrainingSession's arguments as the library's options: it adds TF's default hooks and
    resolves the frequencies itself (T1–T10)."""

    def __init__(self, creator, arguments):
        super().__init__(creator.scaffold, creator._is_chief)
        self._creator = creator
        self._arguments = arguments

    def _options(self, owner):
        options = self._creator._options(owner)
        for key, value in self._arguments.items():
            if value is USE_DEFAULT:
                continue
            if value is None:
                options.set_none(key)
            elif isinstance(value, (str, bytes)):  # bytes: a path, _paths.encode
                options.set_string(key, value)
            elif native.option_info(key).type == native.TW_OPTION_TYPE_DOUBLE:  # the library's own table
                options.set_double(key, float(value))
            else:
                options.set_int64(key, int(value))
        return options



class MonitoredTrainingSession(MonitoredSession):
    """A MonitoredSession set up for training (T1–T10). A chief restores the newest good checkpoint of
    ``checkpoint_dir`` and runs, in TF's order: ``chief_only_hooks``, a StepCounterHook and a
    SummarySaverHook (every published value) writing to ``summary_dir`` (default: checkpoint_dir), a
    CheckpointSaverHook (every 600 s unless told otherwise), then ``hooks``. A worker waits for the
    chief and runs ``hooks`` only. ``variables`` (name → array, or trainwatch.Shard: this rank's slice
    of a sharded tensor; with a collective every rank then saves its part) are what checkpoints hold; retention is
    ``max_to_keep`` / ``keep_checkpoint_every_n_hours``. A chief holds ``checkpoint_dir``'s lock until
    it is closed: a second chief of the same directory (another process or session) raises
    ``FailedPreconditionError`` at creation. ``recycle_checkpoint_files`` is Saver's ``recycle_files``
    (off by default; see its risk there). A damaged or missing state file is repaired from the
    checkpoints found in the directory; it never makes the chief start over.

    With a ``collective`` (trainwatch.distributed; the other distributed arguments as MonitoredSession's),
    ``is_chief`` defaults to ``collective.rank == 0``, and a worker waits for the chief through the
    collective instead of polling; without one it defaults to True, as in TF. When one rank's variables
    fail to register, every rank's session raises at once — that rank its own exception, the others an
    error naming it and its reason (D1)."""

    def __init__(self, master="", is_chief=USE_DEFAULT, checkpoint_dir=None, scaffold=None, hooks=None,
                 chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                 save_summaries_secs=USE_DEFAULT, config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                 max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT, summary_dir=None, save_graph_def=True,
                 variables=None, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0, collective=None,
                 collective_timeout_secs=600.0, vote_every_n_runs=1, restore_via_broadcast=False,
                 catch_preemption_signals=False, recycle_checkpoint_files=False):
        del master, config, stop_grace_period_secs, save_graph_def
        if is_chief is USE_DEFAULT:
            is_chief = collective is None or _rank_of(collective) == 0
        if scaffold is None:
            scaffold = Scaffold(variables=variables)
        elif variables is not None:
            raise ValueError("pass variables either to MonitoredTrainingSession or to its Scaffold, not both")
        if is_chief:
            creator = ChiefSessionCreator(scaffold, checkpoint_dir=checkpoint_dir)
        else:
            creator = WorkerSessionCreator(scaffold, max_wait_secs=max_wait_secs)
        retention = creator.retention or (max_to_keep, keep_checkpoint_every_n_hours, recycle_checkpoint_files)
        arguments = {
            native.TW_OPT_SUMMARY_DIR: USE_DEFAULT if summary_dir is None else _paths.encode(summary_dir, "summary_dir"),
            native.TW_OPT_CHECKPOINT_EVERY_N_SECS: save_checkpoint_secs,
            native.TW_OPT_CHECKPOINT_EVERY_N_STEPS: save_checkpoint_steps,
            native.TW_OPT_SUMMARY_EVERY_N_STEPS: save_summaries_steps,
            native.TW_OPT_SUMMARY_EVERY_N_SECS: save_summaries_secs,
            native.TW_OPT_STEP_COUNT_EVERY_N_STEPS: 0 if log_step_count_steps is None else log_step_count_steps,
            native.TW_OPT_MAX_WAIT_SECS: -1.0 if max_wait_secs is None else max_wait_secs,
            native.TW_OPT_MAX_TO_KEEP: retention[0],
            native.TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS: retention[1],
            native.TW_OPT_CHECKPOINT_RECYCLE_FILES: int(bool(retention[2])),
        }
        if collective is not None and not is_chief and checkpoint_dir is not None:
            # D2: a worker restores the checkpoint the chief names from its own mount of the directory.
            arguments[native.TW_OPT_CHECKPOINT_DIR] = _paths.encode(checkpoint_dir, "checkpoint_dir")
        _MonitoredSession.__init__(self, _TrainingSessionCreator(creator, arguments), hooks,
                                   native.Session.monitored_training, chief_only_hooks,
                                   _distributed(collective, collective_timeout_secs, vote_every_n_runs,
                                                restore_via_broadcast, catch_preemption_signals))
