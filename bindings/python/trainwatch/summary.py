"""TensorBoard event files, as tf.compat.v1.summary has them: ``FileWriter`` writes them and
``summary_iterator`` reads them back.

A FileWriter shares its file with every other writer of the same directory (the hooks' included), as
TF's FileWriterCache does; events are buffered and written every 10 events or 120 s, on ``flush`` and
on ``close``.
"""
import numbers
import os
from typing import NamedTuple, Optional

from . import _paths, native
from .tensors import borrow


class Event(NamedTuple):
    """One event: ``scalars`` maps each scalar summary's tag to its value; ``session_log_status`` is
    TF's SessionLog.status (1 START, 2 STOP, 3 CHECKPOINT) or 0."""

    wall_time: float
    step: int
    file_version: Optional[str]
    scalars: dict
    tags: tuple
    session_log_status: int
    checkpoint_path: str
    message: str


class SessionLog(NamedTuple):
    """TF's SessionLog message: what ``FileWriter.add_session_log`` writes."""

    status: int  # SessionLog.START, STOP or CHECKPOINT
    checkpoint_path: str = ""  # the checkpoint's prefix, for CHECKPOINT
    msg: str = ""

    START = native.TW_SESSION_LOG_START
    STOP = native.TW_SESSION_LOG_STOP
    CHECKPOINT = native.TW_SESSION_LOG_CHECKPOINT


def summary_iterator(path):
    """Yields the Events of an event file in order; checksums are verified (DataLossError)."""
    reader = native.EventReader(_paths.encode(path, "path"))
    raw = native.Event()
    while reader.next(raw):
        tags = tuple(raw.tags)
        scalars = {tag: value for tag, value in zip(tags, raw.scalars) if value == value}
        yield Event(raw.wall_time, raw.step, "brain.Event:2" if raw.kind == native.TW_EVENT_FILE_VERSION else None,
                    scalars, tags, raw.session_log_status, raw.checkpoint_path, raw.message)


def _is_scalar(value):
    return isinstance(value, numbers.Real) or getattr(value, "ndim", None) == 0


class FileWriter:
    """tf.compat.v1.summary.FileWriter: appends events to ``<logdir>/events.out.tfevents.*``, creating
    ``logdir`` if needed. A context manager: leaving the ``with`` block closes it.

    Unlike TF, adding to a closed writer raises FailedPreconditionError instead of dropping the event.
    """

    def __init__(self, logdir):
        self._logdir = os.fspath(logdir)
        self._native = native.SummaryWriter(_paths.encode(self._logdir, "logdir"))
        self._closed = False

    def get_logdir(self):
        """The directory given to the constructor."""
        return self._logdir

    @property
    def path(self):
        """The event file's absolute path."""
        return self._native.path()

    def add_summary(self, summary, global_step=None):
        """Adds a summary at ``global_step`` (0 when None): a serialized Summary protobuf (bytes, or a
        message with ``SerializeToString``, e.g. TF's ``tf.compat.v1.Summary``), or a mapping of tags
        to values — a number is written as a scalar, an array (numpy, torch, …) as the histogram of its
        elements, one event each."""
        step = 0 if global_step is None else int(global_step)
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        if isinstance(summary, (bytes, bytearray, memoryview)):
            self._native.add_summary(step, bytes(summary))
            return
        if not hasattr(summary, "items"):
            raise TypeError("summary must be a serialized Summary (bytes or a protobuf message) or a mapping "
                            f"of tags to values; got {type(summary).__name__}")
        for tag, value in summary.items():
            if _is_scalar(value):
                self._native.add_scalar(tag, step, float(value))
            else:
                held = borrow(value, "summary value", tag)
                self._native.add_histogram(tag, step, held.tensors()[0])

    def add_session_log(self, session_log, global_step=None):
        """Adds a SessionLog event (``SessionLog`` above, or anything with ``status``, ``checkpoint_path``
        and ``msg``, such as TF's message) at ``global_step`` (0 when None)."""
        step = 0 if global_step is None else int(global_step)
        self._native.add_session_log(step, int(session_log.status), session_log.checkpoint_path or "",
                                     session_log.msg or "")

    def add_event(self, event):
        """Adds an ``Event`` read by ``summary_iterator`` at its step: its scalars and its session log (a
        file_version event is skipped, the file has its own). The wall time is the time of writing."""
        if not isinstance(event, Event):
            raise TypeError(f"event must be a trainwatch.summary.Event; got {type(event).__name__}")
        for tag, value in event.scalars.items():
            self._native.add_scalar(tag, event.step, value)
        if event.session_log_status:
            self._native.add_session_log(event.step, event.session_log_status, event.checkpoint_path,
                                         event.message)

    def flush(self):
        """Writes the buffered events to disk."""
        self._native.flush()

    def close(self):
        """Flushes and closes the event file (for every writer sharing it, as TF's cache does)."""
        self._native.close()
        self._closed = True

    def reopen(self):
        """After ``close``: opens the directory again, so that later events go to a new event file.
        Does nothing on an open writer."""
        if self._closed:
            self._native = native.SummaryWriter(_paths.encode(self._logdir, "logdir"))
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
