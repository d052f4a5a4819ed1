"""tf.train.Saver and the checkpoint functions: latest_checkpoint, list_variables, load_variable.

Checkpoints save and restore caller-owned arrays in place (numpy arrays, torch tensors, CUDA ones included): restore
writes into the very buffers that were registered. File I/O runs with the GIL released.
"""
import os
import re

import numpy as np

from . import native, shard
from ._paths import decode as _decode
from ._paths import encode as _path
from .distributed import _configure as _configure_distributed
from .distributed import _rank_of
from ._log import logger
from ._raw_session import _open_sessions
from .errors import FailedPreconditionError, InvalidArgumentError, NotFoundError, ResourceExhaustedError
from .tensors import NUMPY_DTYPES, borrow


class Saver:
    """Saves ``variables`` (dict name → array) to ``<save_path>-<global_step>`` and restores them in
    place. Retention as TF: ``max_to_keep`` newest files, plus one every
    ``keep_checkpoint_every_n_hours`` forever (the clock survives restarts).

    ``save``/``restore`` also take TF's leading session argument (``saver.save(sess, path,
    global_step=…)``), which is ignored: the variables are the saver's own.

    From its first save into a directory until it is closed, the saver holds that directory's lock
    (``.trainwatch.lock``): another saver or a session saving there meanwhile raises
    ``FailedPreconditionError`` naming the holder. ``close()`` — or the end of a ``with Saver(...) as
    saver:`` block — releases it at once, so that a second Saver of the same directory (a notebook cell
    run again, a test that trains twice) can save; a saver never closed releases it when garbage
    collected. A closed saver raises ``FailedPreconditionError`` when used. Only its own checkpoints
    are ever deleted, whatever the state file lists.

    In a job of many ranks (trainwatch.distributed), ``variables`` may hold trainwatch.Shard values and
    every rank passes its ``collective``: every rank then calls ``save`` with the same path and step at
    the same point, writes its part, and the chief commits the checkpoint once every part is durable
    (``collective_timeout_secs`` bounds each collective operation, None: no limit). Without Shards only
    the chief saves (rank 0 unless ``is_chief`` says otherwise): another rank's ``save`` writes nothing
    and returns None. Without a collective a Shard restores, but saves only when it is its whole
    global tensor: else ``save`` raises InvalidArgumentError naming it (one process holds only part of
    the tensor). ``restore``, with a collective or without, writes each Shard with its own box of the
    checkpoint's global tensor, whatever slicing wrote it (N ranks, or one process, restore into M), and
    any other variable with the whole tensor; it takes no vote — MonitoredTrainingSession's restore
    does, so that every rank falls back to the same older checkpoint together. With a collective every
    rank builds its Saver at the same point: when one rank's variables fail to register (a Shard outside
    its global shape, a non-contiguous tensor), every rank's Saver raises at once — that rank its own
    exception, the others an error naming it and its reason.

    A checkpoint evicted by ``max_to_keep`` is deleted, as TF deletes it. ``recycle_files=True``
    keeps its file as a hidden spare that a later save overwrites in place instead, which saves
    creating and freeing a file per save; the risk: a program still reading the evicted checkpoint
    without trainwatch's lock (cp, tar, rsync, a backup agent) then gets bytes of two checkpoints. A
    Scaffold's saver passes it on to the session."""

    def __init__(self, variables, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0, pad_step_number=False,
                 collective=None, collective_timeout_secs=600.0, is_chief=None, recycle_files=False):
        # A job's failed registration: D1; recycled files: C15.
        """Creates a saver.

        Args:
          variables: name → array (or ``trainwatch.Shard``): what is saved and restored in place.
          max_to_keep: how many recent checkpoints to keep (0 or None: all).
          keep_checkpoint_every_n_hours: also keep one checkpoint every this many hours, for ever.
          pad_step_number: write the step as 8 digits (``model-00000010``).
          collective: in a job of many ranks, this rank's collective.
          collective_timeout_secs: bound on each collective operation (None: no limit).
          is_chief: whether this rank commits checkpoints (default: rank 0).
          recycle_files: reuse an evicted checkpoint's file for a later save (see above).

        Raises:
          TypeError: ``variables`` is not a dict.
          InvalidArgumentError: a variable cannot be registered (not contiguous, a Shard outside its
            global shape).
        """
        if not isinstance(variables, dict):
            raise TypeError(f"variables must be a dict of name → array; got {type(variables).__name__}")
        self.variables = dict(variables)
        shards = any(isinstance(value, shard.Shard) for value in self.variables.values())
        # A rank that is not the chief, holding no Shards, has nothing of its own to save: every
        # rank writing the same checkpoint would only fight over the directory's lock. Shards always
        # reach the library, which refuses to save a box without the job's collective.
        chief = bool(is_chief) if is_chief is not None else collective is None or _rank_of(collective) == 0
        self._saves = chief or shards
        if collective is None and is_chief is None and not shards:
            self._held = shard.register(self.variables)
            self._saver = native.Saver(self._held.tensors())
        else:
            options = native.Options()
            if is_chief is not None:
                options.set_int64(native.TW_OPT_IS_CHIEF, int(bool(is_chief)))
            # In a job a failed registration still creates the saver, whose creation then fails on every
            # rank naming this one (D1); this rank raises its own exception.
            self._held, failure = shard.register_or_record(self.variables, options)
            if failure is not None and collective is None:
                raise failure
            _configure_distributed(options, collective, collective_timeout_secs, 1, False, False)
            try:
                self._saver = native.Saver(options)
            except Exception as error:
                if failure is None:
                    raise
                shard.raise_registration_failure(failure, error)
        self._saver.set_max_to_keep(max_to_keep)
        self._saver.set_keep_checkpoint_every_n_hours(keep_checkpoint_every_n_hours)
        self._saver.set_pad_step_number(pad_step_number)
        self._saver.set_recycle_files(bool(recycle_files))
        self.max_to_keep = max_to_keep
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.recycle_files = bool(recycle_files)

    def close(self):
        """Releases the saver now, and with it the lock of the directory it saves into; the files
        and variables are not touched. Calling it again does nothing."""
        self._saver.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def save(self, *args, global_step=None, latest_filename=None, meta_graph_suffix="meta", write_meta_graph=True,
             write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Saves the variables: ``save(save_path, global_step=None)``, or TF's
        ``save(sess, save_path, global_step=None)`` (the session is ignored: the variables are the
        saver's own).

        While a session of this process is open whose registered variables are exactly this saver's
        (the same names over the same memory: the session's Scaffold's saver, or a Saver made over the
        same arrays), a save from the thread using it into its checkpoint directory goes through the
        session — its lock, state file and retention — as TF's ``scaffold.saver.save(sess, …)`` from
        a hook beside a CheckpointSaverHook does; any other save uses this saver's own.

        Args:
          *args: ``save_path`` (the checkpoint's prefix, e.g. ``ckpt/model.ckpt``), optionally
            after a session.
          global_step: appended to the prefix (``model.ckpt-10``) when given.
          latest_filename: the state file's name; only the default (None, "checkpoint").
          meta_graph_suffix: accepted for TF code; there is no graph to write.
          write_meta_graph: accepted for TF code; there is no graph to write.
          write_state: must be True: every checkpoint is recorded in the state file, which retention
            reads.
          strip_default_attrs: accepted for TF code; there is no graph to write.
          save_debug_info: accepted for TF code; there is no graph to write.

        Returns:
          The checkpoint's path; None on a rank that does not save.

        Raises:
          FailedPreconditionError: another saver or chief session writes to the directory (the
            message says how to save through a session of this process that holds it).
          InvalidArgumentError: a variable holds NaN/Inf, or is a Shard that is not its whole tensor
            without a collective.
          IOFailureError: the files cannot be written.
          ValueError: the directory of ``save_path`` does not exist ("Parent directory of … doesn't
            exist, can't save.", as TF), ``latest_filename`` is another name, or ``write_state`` is
            False.
        """
        del meta_graph_suffix, write_meta_graph, strip_default_attrs, save_debug_info  # graph-only
        if latest_filename not in (None, "checkpoint"):
            raise ValueError("trainwatch keeps its state file as 'checkpoint'; latest_filename must be None")
        if not write_state:
            raise ValueError("write_state=False is not supported: every checkpoint is recorded in the state file, "
                             "which retention reads")
        save_path, global_step = self._path_args(args, global_step)
        step = native.UNSET if global_step is None else int(global_step)
        if self._saver.closed():
            raise FailedPreconditionError("this Saver is closed: create a new one")
        if not self._saves:
            return None
        self._held.check_unchanged()
        try:
            for session in _open_sessions():
                if session._saves_for(self, save_path):  # C27: the session's own saver saves
                    return session._save_checkpoint(save_path, step)
            saved = self._saver.save(_path(save_path, "save_path"), step)
        except FailedPreconditionError as error:
            raise _with_advice(error, save_path) from None
        except NotFoundError as error:
            if str(error).startswith("Parent directory of "):
                raise ValueError(str(error)) from None  # TF's type for this message
            raise
        return _decode(saved) if saved else None

    def _same_variables(self, registered):
        """Whether ``registered`` (a session's TensorSet) holds exactly this saver's variables: the same
        names over the same memory."""
        def signature(tensors):
            return sorted((t.name(), t.address(), t.dtype(), tuple(t.shape())) for t in tensors)
        return registered is not None and signature(self._held.tensors()) == signature(registered.tensors())

    def restore(self, *args):
        """Writes a checkpoint's values into the variables, all or nothing: ``restore(save_path)``,
        or TF's ``restore(sess, save_path)``.

        Args:
          *args: ``save_path``, the checkpoint's path, optionally after a session.

        Raises:
          NotFoundError: no checkpoint at ``save_path``, or a variable missing from it.
          InvalidArgumentError: a stored tensor's dtype or shape differs from the variable's.
          DataLossError: the checkpoint is damaged (nothing was written).
        """
        save_path, _ = self._path_args(args, None)
        self._held.check_unchanged()
        self._saver.restore(_path(save_path, "save_path"))

    def restore_newest_good(self, checkpoint_dir):
        """Restores the newest intact checkpoint of a directory, skipping damaged ones.

        Args:
          checkpoint_dir: the directory.

        Returns:
          The path of the checkpoint restored.

        Raises:
          NotFoundError: there is no checkpoint to restore.
          DataLossError: every checkpoint is damaged.
        """
        self._held.check_unchanged()
        return _decode(self._saver.restore_newest_good(_path(checkpoint_dir, "checkpoint_dir")))

    def recover_last_checkpoints(self, checkpoint_dir):
        """Re-seeds the list of kept checkpoints and the retention clock from a directory's state
        file, as TF's ``recover_last_checkpoints`` does.

        Args:
          checkpoint_dir: the directory.
        """
        self._saver.recover_last_checkpoints(_path(checkpoint_dir, "checkpoint_dir"))

    @property
    def last_checkpoints(self):
        """The paths of the checkpoints kept, oldest first."""
        return [_decode(path) for path in self._saver.last_checkpoints()]

    @staticmethod
    def _path_args(args, global_step):
        if len(args) >= 2 and not isinstance(args[0], (str, bytes, os.PathLike)):
            args = args[1:]  # TF's leading session
        if len(args) == 2:
            args, global_step = args[:1], args[1]
        if len(args) != 1:
            raise TypeError("expected (save_path) or (sess, save_path)")
        return args[0], global_step


def _with_advice(error, save_path):
    """A refused save into a directory that an open session of this process holds, saying how the save
    can go through that session instead."""
    directory = os.path.dirname(_path(save_path, "save_path")) or b"."
    if ".trainwatch.lock" not in str(error) or not any(s._checkpoint_dir_is(directory) for s in _open_sessions()):
        return error
    return type(error)(f"{error}. A session of this process saves there: a Saver saves into it through the session "
                       "only when it holds exactly the session's variables (the same arrays under the same names); "
                       "save with the session's Scaffold(saver=...) or a Saver of those arrays, or into another "
                       "directory")


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """Finds the filename of the latest saved checkpoint file.

    Args:
      checkpoint_dir: the directory holding the ``checkpoint`` state file.
      latest_filename: the state file's name; only the default (None, "checkpoint") is supported.

    Returns:
      The newest checkpoint's path, or None if there is none.

    Raises:
      ValueError: ``latest_filename`` is another name.
    """
    if latest_filename not in (None, "checkpoint"):
        raise ValueError("trainwatch keeps its state file as 'checkpoint'; latest_filename must be None")
    latest = native.latest_checkpoint(_path(checkpoint_dir, "checkpoint_dir"))
    return _decode(latest) if latest else None


def _global_step_of(path):
    """The global step a session restoring the checkpoint ``path`` takes (S17), as a restore from a
    directory does: its "global_step" tensor, else the step its name ends in ("<prefix>-<step>": a
    standalone Saver's checkpoint holds no global_step), else None."""
    try:
        return int(load_variable(path, "global_step"))  # one listing of the file, not two
    except NotFoundError:
        pass
    match = re.fullmatch(r"([^.].*?)-(-?\d+)", os.path.basename(os.fsdecode(path)))
    return None if match is None else int(match.group(2))


def _checkpoint_file(ckpt_dir_or_file):
    path = _path(ckpt_dir_or_file, "ckpt_dir_or_file")
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise NotFoundError(f"Unable to find a checkpoint in {os.fsdecode(path)}")
        return _path(latest, "latest")
    return path


def list_variables(ckpt_dir_or_file):
    """Lists the checkpoint keys and shapes of variables in a checkpoint.

    Args:
      ckpt_dir_or_file: a checkpoint, or a directory (its latest checkpoint).

    Returns:
      A list of ``(name, shape)``.

    Raises:
      NotFoundError: no checkpoint there.
      DataLossError: the checkpoint's index is damaged.
    """
    return [(t.name(), list(t.shape())) for t in native.list_variables(_checkpoint_file(ckpt_dir_or_file))]


# load_variable's default limit on the bytes a tensor may declare (C22): a file of a few kilobytes can
# declare gigabytes of zeros. TRAINWATCH_MAX_LOAD_BYTES changes the default; max_bytes= one call's.
DEFAULT_MAX_LOAD_BYTES = 1 << 30


def _format_bytes(n):
    value, unit = float(n), None
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024:
            break
        value, unit = value / 1024, next_unit
    return f"{n} bytes" if unit is None else f"{value:.1f} {unit}"


def _max_load_bytes(max_bytes):
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise TypeError(f"max_bytes must be a non-negative int; got {max_bytes!r}")
        return max_bytes
    text = os.environ.get("TRAINWATCH_MAX_LOAD_BYTES", "")
    if not text:
        return DEFAULT_MAX_LOAD_BYTES
    if not text.isdigit():
        raise InvalidArgumentError(f"TRAINWATCH_MAX_LOAD_BYTES={text} is not a number of bytes")
    return int(text)


def load_variable(ckpt_dir_or_file, name, max_bytes=None):
    """Returns the tensor value of the given variable in the checkpoint.

    Args:
      ckpt_dir_or_file: a checkpoint, or a directory (its latest checkpoint).
      name: the variable's name.
      max_bytes: refuse a tensor declaring more bytes than this (default: the environment's
        ``TRAINWATCH_MAX_LOAD_BYTES``, else 1 GiB), before anything is allocated.

    Returns:
      A new numpy array (bfloat16 and float8 as their bits).

    Raises:
      NotFoundError: no checkpoint there, or no variable ``name`` in it.
      ResourceExhaustedError: the tensor declares more than ``max_bytes``.
      DataLossError: the checkpoint is damaged.
    """
    path = _checkpoint_file(ckpt_dir_or_file)
    limit = _max_load_bytes(max_bytes)
    for t in native.list_variables(path):
        if t.name() == name:
            dtype = np.dtype(NUMPY_DTYPES[t.dtype()])
            declared = int(np.prod(t.shape(), dtype=object)) * dtype.itemsize
            if declared > limit:
                raise ResourceExhaustedError(
                    f"tensor '{name}' of checkpoint {os.fsdecode(path)} declares {_format_bytes(declared)}, over the "
                    f"{_format_bytes(limit)} limit of load_variable: pass max_bytes= (TRAINWATCH_MAX_LOAD_BYTES) "
                    "to raise it")
            value = np.empty(tuple(t.shape()), dtype)
            destination = borrow(value, "destination", name, writable=True)
            native.load_variable(path, destination.tensors()[0].reinterpreted(t.dtype()))
            return value
    raise NotFoundError(f"Key {name} not found in checkpoint {os.fsdecode(path)}")


class _ProgressSink(native.ProgressSink):
    """Calls the user's progress function (from the thread saving or restoring, the GIL taken)."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def report(self, kind, path, bytes_done, bytes_total, elapsed_secs, finished):
        self._fn(_PROGRESS_KINDS[kind], path, bytes_done, bytes_total, elapsed_secs, finished)


_PROGRESS_KINDS = {1: "save", 2: "restore"}  # tw_progress_kind


# Every sink ever set stays alive: an operation keeps calling the sink set when it began, which a
# later set_progress_sink must not free under it (Java, C#, Rust and Go keep theirs the same way).
_progress_sinks = []


def set_progress_sink(fn=None, every_n_secs=2.0):
    """Where the progress of long saves and restores goes. An operation (a checkpoint file saved, a
    restore) is reported once it has run ``every_n_secs``, then every ``every_n_secs``, and once when it
    ends (0: after every chunk): by default as INFO lines of the "trainwatch" logger ("Saving checkpoint
    <path>: 512.0 of 1073.7 MB (48%), 250.3 MB/s, 2.2 s left"), or to ``fn(kind, path, bytes_done,
    bytes_total, elapsed_secs, finished)`` with kind "save" or "restore" and bytes counting the
    tensors' bytes; its last call has ``finished`` True and bytes_done == bytes_total. ``fn`` is called
    from the thread doing the work (a background save's, a compressing one); an exception it raises is
    dropped. ``fn=None`` goes back to the log lines."""
    sink = None if fn is None else _ProgressSink(fn)
    native.set_progress_sink(float(every_n_secs), sink)
    if sink is not None:
        _progress_sinks.append(sink)
