"""TensorBoard event files, as tf.compat.v1.summary has them: ``FileWriter`` writes them and
``summary_iterator`` reads them back as TF's ``Event`` messages.

A FileWriter shares its file with every other writer of the same directory (the hooks' included), as
TF's FileWriterCache does; events are buffered and written every 10 events or 120 s, on ``flush`` and
on ``close``. The messages (``Event``, ``Summary``, ``SessionLog``, ``HistogramProto``, ``TensorProto``)
have TF's fields and the protobuf methods TF code calls; no protobuf package is needed.
"""
import numbers
import os
import struct

import numpy as np

from . import _paths, native
from ._event_proto import (Event, HistogramProto, LogMessage, ProtoDecodeError, SessionLog, Summary,
                           SummaryMetadata, TaggedRunMetadata, TensorProto, TensorShapeProto)
from .errors import DataLossError
from .tensors import borrow

__all__ = ["FileWriter", "FileWriterCache", "summary_iterator", "Event", "Summary", "SummaryMetadata",
           "SessionLog", "LogMessage", "HistogramProto", "TensorProto", "TensorShapeProto", "TaggedRunMetadata"]

_RECORD_HEADER = struct.Struct("<QI")  # TFRecord: length, masked CRC-32C of the length


def summary_iterator(path):
    """Reads an event file, as ``tf.compat.v1.train.summary_iterator`` does.

    Args:
      path: the event file (``str``, ``bytes`` or ``os.PathLike``), e.g. one of
        ``<logdir>/events.out.tfevents.*``.

    Yields:
      Each record as an ``Event`` message, in file order: ``event.step``, ``event.wall_time``,
      ``event.HasField("summary")``, ``event.summary.value[0].simple_value``, ….

    Raises:
      NotFoundError: no file at ``path``.
      InvalidArgumentError: ``path`` is not a regular file (a directory, FIFO or device).
      DataLossError: a record fails its checksum, is truncated or is not an Event (the message
        names the file and the record's offset); the events before it have been yielded.
      TypeError: ``path`` is not a path.
    """
    encoded = _paths.encode(path, "path")
    # The library frames each record and verifies both checksums; the bytes it vouched for are then
    # decoded here, all of the message (histograms, tensors, images …), from the same file.
    reader = native.EventReader(encoded)
    checked = native.Event()
    with open(encoded, "rb") as records:
        while reader.next(checked):
            offset = records.tell()
            header = records.read(_RECORD_HEADER.size)
            data = records.read(_RECORD_HEADER.unpack(header)[0]) if len(header) == _RECORD_HEADER.size else b""
            records.read(4)  # the data's CRC, checked by the library
            try:
                yield Event.FromString(data)
            except ProtoDecodeError as error:
                raise DataLossError(f"{os.fsdecode(encoded)}: the record at byte {offset} is not an Event: "
                                    f"{error}") from None


def _is_scalar(value):
    return isinstance(value, numbers.Real) or getattr(value, "ndim", None) == 0


class FileWriter:
    """Writes summaries and session logs to an event file, as ``tf.compat.v1.summary.FileWriter``.

    Events go to ``<logdir>/events.out.tfevents.*``, shared with every other writer of ``logdir`` (the
    hooks' included). A context manager: leaving the ``with`` block closes it. Unlike TF, adding to a
    closed writer raises ``FailedPreconditionError`` instead of dropping the event.

    Args:
      logdir: the directory (created with its parents if needed).
      graph: accepted so TF code runs (``FileWriter(logdir, sess.graph)``); there is no graph to
        write, and nothing is written for it.
      graph_def: accepted and ignored, as ``graph``.

    Raises:
      FailedPreconditionError: ``logdir`` or a parent exists and is not a directory.
      IOFailureError: the directory or the event file cannot be created.
      TypeError: ``logdir`` is not a path.
    """

    def __init__(self, logdir, graph=None, graph_def=None):
        del graph, graph_def  # graph-only: nothing to write
        self._logdir = os.fspath(logdir)
        self._native = native.SummaryWriter(_paths.encode(self._logdir, "logdir"))
        self._closed = False

    def get_logdir(self):
        """Returns the directory given to the constructor."""
        return self._logdir

    @property
    def path(self):
        """The event file's absolute path."""
        return self._native.path()

    def add_summary(self, summary, global_step=None):
        """Adds a summary event.

        Args:
          summary: a ``Summary`` message (trainwatch's, or TF's ``tf.compat.v1.Summary``: anything
            with ``SerializeToString``), its serialized bytes (also as the 1-D uint8 array that a
            step's published bytes come back as when a hook fetches them: TF's fetched summary
            op), or a mapping of tags to values — a number is written as a scalar, an array (numpy,
            torch, …) as the histogram of its elements, one event each.
          global_step: the event's step (0 when None).

        Raises:
          DataLossError: the bytes are not a Summary.
          InvalidArgumentError: an array holds NaN or Inf (no histogram of it is written).
          FailedPreconditionError: the writer was closed.
          TypeError: ``summary`` is none of the above.
        """
        step = 0 if global_step is None else int(global_step)
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        elif isinstance(summary, np.ndarray) and summary.dtype == np.uint8 and summary.ndim == 1:
            summary = summary.tobytes()  # published bytes, fetched (B50)
        if isinstance(summary, (bytes, bytearray, memoryview)):
            self._native.add_summary(step, bytes(summary))
            return
        if not hasattr(summary, "items"):
            raise TypeError("summary must be a Summary (a message or its bytes) or a mapping of tags to "
                            f"values; got {type(summary).__name__}")
        for tag, value in summary.items():
            if _is_scalar(value):
                self._native.add_scalar(tag, step, float(value))
            else:
                held = borrow(value, "summary value", tag)
                self._native.add_histogram(tag, step, held.tensors()[0])

    def add_session_log(self, session_log, global_step=None):
        """Adds a session log event.

        Args:
          session_log: a ``SessionLog`` (or anything with ``status``, ``checkpoint_path`` and
            ``msg``, such as TF's message).
          global_step: the event's step (0 when None).

        Raises:
          InvalidArgumentError: ``status`` is not a SessionLog status.
          FailedPreconditionError: the writer was closed.
        """
        step = 0 if global_step is None else int(global_step)
        self._native.add_session_log(step, int(session_log.status), session_log.checkpoint_path or "",
                                     session_log.msg or "")

    def add_event(self, event):
        """Adds an event at its step, e.g. one ``summary_iterator`` read from another file.

        Its summary and session log are written; a file_version event is skipped (the file has its
        own), and graphs and run metadata are not written (there are none to show). The wall time is
        the time of writing.

        Args:
          event: an ``Event`` message (or TF's: anything with ``SerializeToString``).

        Raises:
          TypeError: ``event`` is not an Event message.
          FailedPreconditionError: the writer was closed.
        """
        if not isinstance(event, Event):
            if not hasattr(event, "SerializeToString"):
                raise TypeError("event must be a trainwatch.summary.Event (or TF's Event message); "
                                f"got {type(event).__name__}")
            event = Event.FromString(event.SerializeToString())
        if event.HasField("summary"):
            self._native.add_summary(event.step, event.summary.SerializeToString())
        elif event.HasField("session_log"):
            self.add_session_log(event.session_log, event.step)

    # Graph-only calls: TF code makes them; without a graph they have nothing to write.

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Accepted so TF code runs; there is no graph, and nothing is written.

        Args:
          graph: ignored.
          global_step: ignored.
          graph_def: ignored.
        """
        del graph, global_step, graph_def

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Accepted so TF code runs; there is no meta graph, and nothing is written.

        Args:
          meta_graph_def: ignored.
          global_step: ignored.
        """
        del meta_graph_def, global_step

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Accepted so TF code runs; a run has no RunMetadata, and nothing is written (the
        ``ProfilerHook`` writes Chrome traces instead).

        Args:
          run_metadata: ignored.
          tag: ignored.
          global_step: ignored.
        """
        del run_metadata, tag, global_step

    def flush(self):
        """Writes the buffered events to disk.

        Raises:
          IOFailureError: a write failed.
        """
        self._native.flush()

    def close(self):
        """Flushes and closes the event file, for every writer sharing it (as TF's cache does).

        Raises:
          IOFailureError: the last write failed (the file is closed anyway).
        """
        self._native.close()
        self._closed = True

    def reopen(self):
        """After ``close``, opens the directory again: later events go to a new event file. Does
        nothing on an open writer."""
        if self._closed:
            self._native = native.SummaryWriter(_paths.encode(self._logdir, "logdir"))
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()


class FileWriterCache:
    """``tf.compat.v1.summary.FileWriterCache``: one ``FileWriter`` per directory."""

    _writers = {}

    @staticmethod
    def get(logdir):
        """Returns the cache's ``FileWriter`` for ``logdir``, creating it (or reopening it after a
        close) if needed.

        Args:
          logdir: the directory.

        Returns:
          A ``FileWriter`` that writes to the file every writer of ``logdir`` shares.
        """
        key = os.path.abspath(os.fspath(logdir))
        writer = FileWriterCache._writers.get(key)
        if writer is None:
            writer = FileWriterCache._writers[key] = FileWriter(logdir)
        writer.reopen()
        return writer

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        writers, FileWriterCache._writers = FileWriterCache._writers, {}
        for writer in writers.values():
            writer.close()
