"""tf.train's sessions: MonitoredSession, SingularMonitoredSession, MonitoredTrainingSession, the
session creators and Scaffold.

A session runs the caller's step function: ``sess.run(step_fn, feed_dict=None)`` calls every hook's
before_run, then ``step_fn(step_context)``, then every hook's after_run, and returns what the step
returned. ``sess.run(fetches)`` with names instead reads values (variables, "global_step") without a
step, as ``session.run(tensor)`` in TF. A step returns a dict of outputs (name → array, published zero copy for hooks to fetch), raises
StopIteration / OutOfRangeError at the end of its data, or AbortedError to trigger recovery.

TF's graph arguments (master, config, save_graph_def) are accepted and have nothing to act on;
stop_grace_period_secs is how long closing the session waits for the threads registered with the
Coordinator its hooks receive.
"""
import os
import threading

from . import _paths, native, shard
from .distributed import _configure as _configure_distributed, _rank_of
from ._fetches import read
from ._hook_adapter import HookAdapter
from ._log import logger
from ._raw_session import RawSession, creating, owner_of, register, unregister
from ._step import StepRunner
from .basic_session_run_hooks import CheckpointSaverHook, NativeHook, _histogram_names
from .checkpoint import Saver, _global_step_of
from .coordinator import Coordinator
from .errors import FailedPreconditionError, OutOfRangeError
from .session_run_hook import SessionRunHook


class Scaffold:
    """Structure to create or gather pieces commonly needed to train a model: here the variables, the
    function that initialises them when nothing was restored, and the saver.

    As in TF, a scaffold a session was created from (or one ``finalize()`` was called on) has a saver
    even when none was given: ``scaffold.saver`` is then a ``trainwatch.Saver`` over the scaffold's
    variables, made when first read. Inside an open session, ``scaffold.saver.save(sess, path,
    global_step=step)`` into the session's checkpoint directory saves through the session: its lock,
    state file and retention, beside its CheckpointSaverHook."""

    def __init__(self, init_fn=None, variables=None, saver=None):
        """Creates a scaffold.

        Args:
          init_fn: ``init_fn(scaffold, session)``, called by a chief when nothing was restored.
          variables: name → array (numpy, torch, anything with the buffer protocol or ``__dlpack__``)
            or ``trainwatch.Shard``: what checkpoints hold and hooks read, registered zero copy.
            Default: the saver's.
          saver: a ``trainwatch.Saver`` whose variables and retention the session adopts.

        Raises:
          TypeError: ``saver`` is not a ``trainwatch.Saver`` or ``variables`` not a dict.
        """
        if saver is not None and not isinstance(saver, Saver):
            raise TypeError(f"saver must be a trainwatch.Saver; got {type(saver).__name__}")
        if variables is None and saver is not None:
            variables = saver.variables
        if variables is not None and not isinstance(variables, dict):
            raise TypeError(f"variables must be a dict of name → array; got {type(variables).__name__}")
        self.init_fn = init_fn
        self.variables = dict(variables or {})
        self._saver = saver
        self._default_saver = None  # the one finalize() promised, once read
        self._finalized = False

    @property
    def saver(self):
        """The saver: the one given, else — once finalized — a ``trainwatch.Saver`` over ``variables``
        (TF's default saver); None before."""
        if self._saver is None and self._finalized:
            if self._default_saver is None:
                self._default_saver = Saver(self.variables)
            return self._default_saver
        return self._saver

    @saver.setter
    def saver(self, value):
        if value is not None and not isinstance(value, Saver):
            raise TypeError(f"saver must be a trainwatch.Saver; got {type(value).__name__}")
        self._saver = value

    def finalize(self):
        """Marks the scaffold complete, as a session does when it is created: from now on ``saver`` is
        never None (a default saver over the variables when none was given). There is no graph to
        freeze.

        Returns:
          The scaffold.
        """
        self._finalized = True
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
        saver = self.scaffold._saver  # the one given: a default saver (finalize) has TF's defaults, not the session's
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

    def _saving_dir(self):
        """The checkpoint directory a session of this creator saves into (None: a worker, or none)."""
        return None


# S1, S5, S7
class ChiefSessionCreator(_SessionCreator):
    """Creates a session for a chief: it restores the newest good checkpoint (of ``checkpoint_dir``,
    or the file ``checkpoint_filename_with_path``: any checkpoint trainwatch wrote, its global step the
    file's ``global_step``, else the step its name ends in), or else runs the scaffold's ``init_fn``.
    A session that only restores — no CheckpointSaverHook, no NaN rollback, no preemption save — does
    not lock ``checkpoint_dir``: the program's own Saver may save there meanwhile."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        """Initializes a chief session creator.

        Args:
          scaffold: a ``Scaffold`` (default: an empty one).
          master: accepted for TF code; there is no server to connect to.
          config: accepted for TF code; there is no ConfigProto to apply.
          checkpoint_dir: restore the newest good checkpoint of this directory.
          checkpoint_filename_with_path: restore this checkpoint file instead.

        Raises:
          ValueError: both ``checkpoint_dir`` and ``checkpoint_filename_with_path`` are given.
          TypeError: ``scaffold`` is not a ``Scaffold``.
        """
        del master, config
        if checkpoint_dir is not None and checkpoint_filename_with_path is not None:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        super().__init__(scaffold, is_chief=True)
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_filename_with_path = checkpoint_filename_with_path

    def _saving_dir(self):
        return self.checkpoint_dir

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
            step = _global_step_of(path)  # S17: any trainwatch checkpoint, a standalone Saver's too
            if step is None:
                logger.warning("Checkpoint %s holds no global_step and its name carries none: global step stays %d",
                               os.fsdecode(path), session.global_step)
            else:
                session.set_global_step(step)
        return restore_file


# S2, S10
class WorkerSessionCreator(_SessionCreator):
    """Creates a session for a worker: it waits for the chief instead of restoring."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        """Initializes a worker session creator.

        Args:
          scaffold: a ``Scaffold`` (default: an empty one).
          master: accepted for TF code; there is no server to connect to.
          config: accepted for TF code; there is no ConfigProto to apply.
          max_wait_secs: how long to wait for the chief (None: for ever).

        Raises:
          TypeError: ``scaffold`` is not a ``Scaffold``.
        """
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

    def __init__(self, session_creator, hooks, kind, chief_only_hooks=None, distributed=None,
                 stop_grace_period_secs=120):
        hooks, chief_only_hooks = list(hooks or []), list(chief_only_hooks or [])
        for hook in hooks + chief_only_hooks:
            if not isinstance(hook, SessionRunHook):
                raise TypeError(f"hooks must be SessionRunHook instances; got {type(hook).__name__}")
        self._hooks = hooks + chief_only_hooks
        self._native = None
        self._alive = True
        self._raw = None
        self._coordinator = None  # made when a hook first asks for it
        self._stop_grace_period_secs = stop_grace_period_secs
        self._held = []
        self._registered = None  # the variables' TensorSet, checked before every use
        self._registration_failure = None  # this rank's, raised once the job has heard of it
        self._variables = shard.arrays(session_creator.scaffold.variables)
        self._scaffold = session_creator.scaffold.finalize()  # TF's: from now on scaffold.saver is never None
        self._checkpoint_dir = session_creator._saving_dir()
        self._open = True  # until close() returns or the session is abandoned
        self._thread = threading.get_ident()  # the thread using the session: created it, or ran it last
        self._runner = StepRunner(self)
        self._current_step_fn = None
        self._current_feed_dict = None
        self._last_run_values = {}  # name → what Python hooks fetched in the last run (B10)
        self._ending = False
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
        """Runs one step with the hooks, or reads values by name.

        ``run(step_fn)`` calls every hook's before_run, then ``step_fn(step_context)``, then every
        hook's after_run, and returns what ``step_fn`` returned; its dict of outputs (name → array)
        is published for the hooks to fetch, and the global step goes up by one.
        ``run(fetches)`` — a name or any nesting of names of registered variables or "global_step" —
        returns their values without running a step and without calling hooks.

        Args:
          fetches: a step function (a callable taking a ``StepContext``), or names.
          feed_dict: name → array, read by the step as ``step_context.feeds``.

        Returns:
          What the step function returned, or the values in the structure of ``fetches`` (numpy
          arrays; numpy scalars for 0-d values; for a tensor on a GPU, a copy on the same device, a
          torch tensor).

        Raises:
          OutOfRangeError: the input is exhausted (a ``with`` block ends cleanly on it).
          NanLossDuringTrainingError: a NanTensorHook saw a NaN loss.
          NotFoundError: a name matches no variable, output or "global_step".
          TypeError: the step returned a str, bytes, list or tuple (a step does not fetch names).
          RuntimeError: the session is closed.
          Exception: whatever the step function or a hook raised, unchanged.
        """
        if self._native is None:
            raise RuntimeError("Session is closed.")
        if not callable(fetches):
            return read(self._native, fetches, feed_dict)
        step_fn = fetches
        self._thread = threading.get_ident()
        self._current_step_fn = step_fn
        self._current_feed_dict = feed_dict
        self._last_run_values = {}
        try:
            return self._run_step(self._native.run, step_fn, feed_dict)
        finally:
            self._current_step_fn = self._current_feed_dict = None

    def run_step_fn(self, step_fn):
        """Runs one step with the hooks: ``run(step_fn)``, under TF's name for it.

        Args:
          step_fn: a callable taking a ``StepContext``.

        Returns:
          What ``step_fn`` returned.
        """
        return self.run(step_fn)

    def run_without_hooks(self, step_fn, feed_dict=None):
        """Runs a step without the hooks and without changing the global step (evaluation, an
        iterator reset), recovering from preemption as ``run`` does.

        Args:
          step_fn: a callable taking a ``StepContext``.
          feed_dict: name → array, read by the step as ``step_context.feeds``.

        Returns:
          What ``step_fn`` returned.

        Raises:
          RuntimeError: the session is closed.
          Exception: whatever the step function raised, unchanged.
        """
        if self._native is None:
            raise RuntimeError("Session is closed.")
        self._thread = threading.get_ident()
        return self._run_step(self._native.run_without_hooks, step_fn, feed_dict, nested=True)

    def should_stop(self):
        """Returns True once a hook, the step or the coordinator requested a stop, or the session
        is closed."""
        return self._native is None or self._native.should_stop()

    def request_stop(self):
        """Requests a stop: ``should_stop()`` returns True after the run in progress."""
        self._session().request_stop()

    # H17, W17, W18
    def close(self):
        """Calls every hook's ``end`` (unless a run failed), then releases the session; then, as TF,
        stops the threads registered with the hooks' Coordinator and joins them (waiting at most
        ``stop_grace_period_secs``).

        Raises:
          Exception: what a hook's ``end`` raised, else the exception a thread reported to the
            Coordinator (the session is closed anyway).
          RuntimeError: the session is already closed.
        """
        session = self._session()
        self._check_variables()  # end() may save them
        self._ending = True
        self._thread = threading.get_ident()
        try:
            session.close()
        finally:
            self._ending = False
            self._last_run_values = {}
            self._open = False
            self._join_coordinator()  # W15: also after an end() that raised, as TF's finally

    @property
    def global_step(self):
        """The global step now (an int)."""
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
            self._join_coordinator()
        return exception_type is None

    # -- what callbacks and the rest of the package use -------------------------------------------

    def raw_session(self, session_ref=None):
        """Returns the ``RawSession`` that hooks and step functions receive.

        Args:
          session_ref: the library's reference to the session (internal; leave it out).
        """
        if self._raw is None:
            self._raw = RawSession(self, session_ref if session_ref is not None else self._native)
        return self._raw

    def coordinator(self):
        """Returns the ``Coordinator`` that hooks' ``after_create_session`` receive."""
        if self._coordinator is None:
            # W12: every exception a thread reports is recorded, OutOfRangeError included.
            self._coordinator = Coordinator(clean_stop_exception_types=[])
            self._coordinator._on_stop = self._stop_for_coordinator
        return self._coordinator

    def _stop_for_coordinator(self):
        """A stop requested through the Coordinator, from any thread, stops the session (in a job,
        through the next run's vote, D5) until it is closed."""
        if self._open and self._alive:
            try:
                self.raw_session().request_stop()
            except (RuntimeError, FailedPreconditionError):
                pass  # closed meanwhile: nothing left to stop

    def _join_coordinator(self):
        """TF's close of a coordinated session: stop the threads registered with the hooks'
        Coordinator, join them, raise the exception one reported."""
        coordinator = self._coordinator
        if coordinator is not None and not coordinator.joined:
            coordinator.request_stop()
            coordinator.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)

    # C27: a Saver's save that is the session's own (Saver.save asks every open session).
    def _session_ref(self):
        """The library's session while it is open — during its creation, the reference its callbacks got."""
        if not (self._alive and self._open):
            return None
        if self._native is not None:
            return self._native
        return self._raw._ref if self._raw is not None else None

    def _checkpoint_dir_is(self, directory):
        """Whether ``directory`` is one this open chief saves into (any spelling of it): its checkpoint
        directory, or that of one of its CheckpointSaverHooks (the session's saver writes there)."""
        session = self._session_ref()
        if session is None:
            return False
        saving = [] if self._checkpoint_dir is None else [self._checkpoint_dir]
        if session.is_chief():
            saving += [hook._tw_args[0] for hook in self._hooks if isinstance(hook, CheckpointSaverHook)]
        for candidate in saving:
            try:
                if os.path.samefile(directory, _paths.encode(candidate, "checkpoint_dir")):
                    return True
            except OSError:
                pass
        return False

    def _saves_for(self, saver, save_path):
        """Whether ``saver.save(save_path)`` saves through this session: it is open, the caller is the
        thread using it (another thread would be refused, or would refuse the session's next run),
        ``saver`` holds exactly its registered variables (its scaffold's saver does, unless given other
        arrays than the scaffold's variables), and ``save_path`` lies in its checkpoint directory."""
        if threading.get_ident() != self._thread:
            return False
        if not self._checkpoint_dir_is(os.path.dirname(_paths.encode(save_path, "save_path")) or b"."):
            return False
        return saver._same_variables(self._registered)

    def _save_checkpoint(self, save_path, step):
        """The session's saver saves the variables and global step into its directory."""
        self._check_variables()
        return _paths.decode(self._session_ref().save_checkpoint(_paths.encode(save_path, "save_path"), step))

    def _handle(self, hook):
        return hook._handle_for(self) if isinstance(hook, NativeHook) else HookAdapter(hook, self)

    def _session(self):
        if self._native is None:
            raise RuntimeError("Session is closed.")
        return self._native

    def _values_for_end(self):  # B10
        """What hooks' ``end`` reads of the outputs: the values hooks fetched in the last run; None
        outside ``end``, where outputs exist only during a run."""
        return self._last_run_values if self._ending else None

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
        self._open = False
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


# W1, W28
class MonitoredSession(_MonitoredSession):
    """Session-like object that handles initialization, recovery and hooks: ``AbortedError`` or
    ``UnavailableError`` anywhere in a run re-create the session (restoring the latest checkpoint)
    and retry the run."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120, collective=None,
                 collective_timeout_secs=600.0, vote_every_n_runs=1, restore_via_broadcast=False,
                 catch_preemption_signals=False):
        """Creates a MonitoredSession (the hooks' ``begin``, then the session, then their
        ``after_create_session``).

        Args:
          session_creator: a ``ChiefSessionCreator`` or ``WorkerSessionCreator``; default: a chief
            (with a collective, rank 0 is the chief and the others workers).
          hooks: ``SessionRunHook`` objects, called in this order.
          stop_grace_period_secs: how long ``close()`` waits for the threads registered with the
            hooks' Coordinator once it requested their stop.
          collective: many processes (``trainwatch.distributed``): a ``TorchCollective``,
            ``MPICollective`` or your own; the ranks agree on the restored step, stop, NaN,
            recovery and preemption.
          collective_timeout_secs: bound on every collective operation (None: no limit).
          vote_every_n_runs: how often the ranks vote on stopping.
          restore_via_broadcast: the chief sends the restored variables to ranks that cannot read
            its files.
          catch_preemption_signals: note SIGTERM/SIGUSR1 and end the job after the run in progress,
            with a checkpoint on every rank at the same step (also without a collective).

        Raises:
          TypeError: a hook is not a ``SessionRunHook``.
          FailedPreconditionError: another session or Saver of this process, or another process,
            saves checkpoints to the same directory.
          Exception: what a hook's ``begin``/``after_create_session`` or the ``init_fn`` raised.
        """
        if session_creator is None:
            chief = collective is None or _rank_of(collective) == 0
            session_creator = ChiefSessionCreator() if chief else WorkerSessionCreator()
        super().__init__(session_creator, hooks, native.Session.monitored,
                         distributed=_distributed(collective, collective_timeout_secs, vote_every_n_runs,
                                                  restore_via_broadcast, catch_preemption_signals),
                         stop_grace_period_secs=stop_grace_period_secs)


# W26, W27
class SingularMonitoredSession(_MonitoredSession):
    """Session-like object with hooks and no recovery, always a chief."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        """Creates a SingularMonitoredSession.

        Args:
          hooks: ``SessionRunHook`` objects, called in this order.
          scaffold: a ``Scaffold`` (variables, init_fn, saver).
          master: accepted for TF code; there is no server to connect to.
          config: accepted for TF code; there is no ConfigProto to apply.
          checkpoint_dir: restore the newest good checkpoint of this directory.
          stop_grace_period_secs: how long ``close()`` waits for the threads registered with the
            hooks' Coordinator once it requested their stop.
          checkpoint_filename_with_path: restore this checkpoint file instead.

        Raises:
          ValueError: both checkpoint arguments are given.
          TypeError: a hook is not a ``SessionRunHook``.
        """
        creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path)
        super().__init__(creator, hooks, native.Session.singular, stop_grace_period_secs=stop_grace_period_secs)

    def should_stop(self):
        """Returns True once a stop was requested or the session is closed.

        Raises:
          Exception: the exception a thread reported to the hooks' Coordinator (without a recovery
            layer, TF's stop check raises it).
        """
        # W13. The stop is read first: a thread's exception is recorded before its stop request, so a
        # stop that a report caused is never answered without raising it.
        stop = super().should_stop()
        if self._coordinator is not None:
            self._coordinator.raise_requested_exception()
        return stop

    def raw_session(self, session_ref=None):
        """Returns the ``RawSession`` that hooks and step functions receive, or None once closed.

        Args:
          session_ref: the library's reference to the session (internal; leave it out).
        """
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

    def _saving_dir(self):
        return self._creator._saving_dir()

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



# T1–T11; a failed registration on one rank fails every rank's creation (D1).
class MonitoredTrainingSession(MonitoredSession):
    """Creates a MonitoredSession for training. A chief restores the newest good checkpoint of
    ``checkpoint_dir`` and runs, in TF's order: ``chief_only_hooks``, a StepCounterHook and a
    SummarySaverHook writing to ``summary_dir`` (scalars of the published values; histograms only of
    the values ``summary_histograms`` names), a CheckpointSaverHook, then ``hooks``. A worker waits
    for the chief and runs ``hooks`` only. A chief that saves checkpoints holds ``checkpoint_dir``'s lock
    until it is closed: another writer of the same directory (another process, session or Saver) raises
    ``FailedPreconditionError`` at creation, naming the holder; with checkpoint saving off
    (``save_checkpoint_secs=None`` and ``save_checkpoint_steps=None``) the chief only restores and takes
    no lock. A damaged or missing state file is repaired from the checkpoints found in the directory; it
    never makes the chief start over."""

    def __init__(self, master="", is_chief=USE_DEFAULT, checkpoint_dir=None, scaffold=None, hooks=None,
                 chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                 save_summaries_secs=USE_DEFAULT, config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                 max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT, summary_dir=None, save_graph_def=True,
                 variables=None, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0, collective=None,
                 collective_timeout_secs=600.0, vote_every_n_runs=1, restore_via_broadcast=False,
                 catch_preemption_signals=False, recycle_checkpoint_files=False, summary_histograms=None):
        """Creates the session.

        Args:
          master: accepted for TF code; there is no server to connect to.
          is_chief: whether this process restores, initialises and saves (default: True, or
            ``collective.rank == 0`` with a collective).
          checkpoint_dir: where checkpoints are restored from and saved to; a chief that saves
            holds the directory until closed.
          scaffold: a ``Scaffold`` (variables, init_fn, saver); give ``variables`` or this.
          hooks: ``SessionRunHook`` objects, run on every process after the default hooks.
          chief_only_hooks: hooks run on the chief only, before the default hooks.
          save_checkpoint_secs: save every this many seconds (default 600; None: not by time).
          save_summaries_steps: write summaries every this many steps (default 100; None: not by
            steps).
          save_summaries_secs: write summaries every this many seconds (default: not by time).
          config: accepted for TF code; there is no ConfigProto to apply.
          stop_grace_period_secs: how long ``close()`` waits for the threads registered with the
            hooks' Coordinator once it requested their stop.
          log_step_count_steps: log "global_step/sec" every this many steps (None: never).
          max_wait_secs: how long a worker waits for the chief (None: for ever).
          save_checkpoint_steps: save every this many steps (default: by time).
          summary_dir: where summaries go (default: ``checkpoint_dir``; with neither, none are
            written).
          save_graph_def: accepted for TF code; there is no graph to write.
          variables: name → array or ``trainwatch.Shard`` (this rank's slice of a sharded tensor):
            what checkpoints hold, registered zero copy.
          max_to_keep: how many recent checkpoints to keep.
          keep_checkpoint_every_n_hours: also keep one checkpoint every this many hours.
          collective: many processes (``trainwatch.distributed``), as ``MonitoredSession``'s.
          collective_timeout_secs: as ``MonitoredSession``'s.
          vote_every_n_runs: as ``MonitoredSession``'s.
          restore_via_broadcast: as ``MonitoredSession``'s.
          catch_preemption_signals: as ``MonitoredSession``'s.
          recycle_checkpoint_files: ``Saver``'s ``recycle_files`` (off by default; see its risk
            there).
          summary_histograms: names or glob patterns of the outputs and variables the default
            SummarySaverHook writes as histograms (default: none, as TF's default summary op holds
            only the summaries the program defined).

        Raises:
          ValueError: ``variables`` are given both here and in ``scaffold``.
          FailedPreconditionError: another writer (a session or Saver of this process or another)
            holds ``checkpoint_dir``; the message names it.
          DataLossError: every checkpoint in ``checkpoint_dir`` is damaged (the message says how to
            start over).
        """
        del master, config, save_graph_def
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
        histogram_names = _histogram_names(summary_histograms, "summary_histograms")
        if histogram_names is not None:
            arguments[native.TW_OPT_SUMMARY_HISTOGRAM_NAMES] = histogram_names
        if collective is not None and not is_chief and checkpoint_dir is not None:
            # D2: a worker restores the checkpoint the chief names from its own mount of the directory.
            arguments[native.TW_OPT_CHECKPOINT_DIR] = _paths.encode(checkpoint_dir, "checkpoint_dir")
        _MonitoredSession.__init__(self, _TrainingSessionCreator(creator, arguments), hooks,
                                   native.Session.monitored_training, chief_only_hooks,
                                   _distributed(collective, collective_timeout_secs, vote_every_n_runs,
                                                restore_via_broadcast, catch_preemption_signals),
                                   stop_grace_period_secs)
