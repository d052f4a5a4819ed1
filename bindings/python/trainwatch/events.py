"""Reading TensorBoard event files back (tf.compat.v1.train.summary_iterator)."""
import os
from typing import NamedTuple, Optional

from . import native


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


def summary_iterator(path):
    """Yields the Events of an event file in order; checksums are verified (DataLossError)."""
    reader = native.EventReader(os.fspath(path))
    raw = native.Event()
    while reader.next(raw):
        tags = tuple(raw.tags)
        scalars = {tag: value for tag, value in zip(tags, raw.scalars) if value == value}
        yield Event(raw.wall_time, raw.step, "brain.Event:2" if raw.kind == native.TW_EVENT_FILE_VERSION else None,
                    scalars, tags, raw.session_log_status, raw.checkpoint_path, raw.message)
