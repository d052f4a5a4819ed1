"""TF's event-file messages (tensorflow/core/util/event.proto, framework/summary.proto, tensor.proto,
tensor_shape.proto), field for field, on the small runtime of ``_proto``: what ``summary_iterator``
yields and what ``FileWriter.add_summary`` / ``add_event`` take. Graph and run-metadata payloads stay
bytes."""
from ._proto import (BOOL, BYTES, DOUBLE, ENUM, FLOAT, INT32, INT64, STRING, UINT32, UINT64, Field, Message,
                     ProtoDecodeError)

__all__ = ["Event", "Summary", "SummaryMetadata", "HistogramProto", "TensorProto", "TensorShapeProto",
           "SessionLog", "LogMessage", "TaggedRunMetadata", "ProtoDecodeError"]


def _nested(cls, outer):
    cls.__qualname__ = f"{outer}.{cls.__name__}"
    return cls


class HistogramProto(Message):
    """A histogram: bucket ``i`` counts the values in [bucket_limit[i-1], bucket_limit[i])."""

    _fields = (Field(1, "min", DOUBLE), Field(2, "max", DOUBLE), Field(3, "num", DOUBLE), Field(4, "sum", DOUBLE),
               Field(5, "sum_squares", DOUBLE), Field(6, "bucket_limit", DOUBLE, repeated=True),
               Field(7, "bucket", DOUBLE, repeated=True))


class Dim(Message):
    """One dimension of a TensorShapeProto."""

    _fields = (Field(1, "size", INT64), Field(2, "name", STRING))


class TensorShapeProto(Message):
    """A tensor's shape: ``dim[i].size`` for each dimension."""

    _fields = (Field(2, "dim", _nested(Dim, "TensorShapeProto"), repeated=True), Field(3, "unknown_rank", BOOL))
    Dim = Dim


class TensorProto(Message):
    """A tensor: ``dtype`` (TF's DataType number), ``tensor_shape``, and its elements either as raw
    bytes in ``tensor_content`` or in the ``*_val`` field of its type."""

    _fields = (Field(1, "dtype", ENUM), Field(2, "tensor_shape", TensorShapeProto), Field(3, "version_number", INT32),
               Field(4, "tensor_content", BYTES), Field(13, "half_val", INT32, repeated=True),
               Field(5, "float_val", FLOAT, repeated=True), Field(6, "double_val", DOUBLE, repeated=True),
               Field(7, "int_val", INT32, repeated=True), Field(8, "string_val", BYTES, repeated=True),
               Field(9, "scomplex_val", FLOAT, repeated=True), Field(10, "int64_val", INT64, repeated=True),
               Field(11, "bool_val", BOOL, repeated=True), Field(12, "dcomplex_val", DOUBLE, repeated=True),
               Field(16, "uint32_val", UINT32, repeated=True), Field(17, "uint64_val", UINT64, repeated=True))


class PluginData(Message):
    """Which TensorBoard plugin a summary value is for, and that plugin's own bytes."""

    _fields = (Field(1, "plugin_name", STRING), Field(2, "content", BYTES))


class SummaryMetadata(Message):
    """What a summary value is: its plugin, display name and description."""

    _fields = (Field(1, "plugin_data", _nested(PluginData, "SummaryMetadata")), Field(2, "display_name", STRING),
               Field(3, "summary_description", STRING), Field(4, "data_class", ENUM))
    PluginData = PluginData


class Image(Message):
    """An encoded image (PNG) of a summary value."""

    _fields = (Field(1, "height", INT32), Field(2, "width", INT32), Field(3, "colorspace", INT32),
               Field(4, "encoded_image_string", BYTES))


class Audio(Message):
    """An encoded audio clip of a summary value."""

    _fields = (Field(1, "sample_rate", FLOAT), Field(2, "num_channels", INT64), Field(3, "length_frames", INT64),
               Field(4, "encoded_audio_string", BYTES), Field(5, "content_type", STRING))


class Value(Message):
    """One summary value: ``tag`` and one of ``simple_value`` (a scalar), ``histo``, ``tensor``,
    ``image``, ``audio`` (``WhichOneof("value")`` says which)."""

    _fields = (Field(7, "node_name", STRING), Field(1, "tag", STRING), Field(9, "metadata", SummaryMetadata),
               Field(2, "simple_value", FLOAT, oneof="value"),
               Field(3, "obsolete_old_style_histogram", BYTES, oneof="value"),
               Field(4, "image", _nested(Image, "Summary"), oneof="value"),
               Field(5, "histo", HistogramProto, oneof="value"),
               Field(6, "audio", _nested(Audio, "Summary"), oneof="value"),
               Field(8, "tensor", TensorProto, oneof="value"))


class Summary(Message):
    """TF's Summary: a list of tagged values, e.g.
    ``Summary(value=[Summary.Value(tag="loss", simple_value=0.5)])``; ``FileWriter.add_summary`` takes it."""

    _fields = (Field(1, "value", _nested(Value, "Summary"), repeated=True),)
    Value = Value
    Image = Image
    Audio = Audio


class LogMessage(Message):
    """A log line in an event file (deprecated in TF, still read)."""

    _fields = (Field(1, "level", ENUM), Field(2, "message", STRING))
    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50


class SessionLog(Message):
    """A session's START, STOP or CHECKPOINT (with the checkpoint's prefix in ``checkpoint_path``);
    ``FileWriter.add_session_log`` writes one. Fields may also be given positionally:
    ``SessionLog(SessionLog.CHECKPOINT, "/ckpt/model.ckpt-10", "saved")``."""

    _fields = (Field(1, "status", ENUM), Field(2, "checkpoint_path", STRING), Field(3, "msg", STRING))
    STATUS_UNSPECIFIED, START, STOP, CHECKPOINT = 0, 1, 2, 3


class TaggedRunMetadata(Message):
    """A RunMetadata of a traced step, kept as its serialized bytes."""

    _fields = (Field(1, "tag", STRING), Field(2, "run_metadata", BYTES))


class SourceMetadata(Message):
    """Which program wrote the event file."""

    _fields = (Field(1, "writer", STRING),)


class Event(Message):
    """TF's Event, one record of an event file: ``wall_time``, ``step`` and one of ``file_version``,
    ``summary``, ``session_log``, ``log_message``, ``graph_def``, ``meta_graph_def``,
    ``tagged_run_metadata`` (``WhichOneof("what")`` says which; ``HasField("summary")`` tests one).

    Beyond TF's fields, four read-only shortcuts: ``scalars`` (tag → simple_value of the summary's
    scalar values), ``tags`` (every summary value's tag), ``session_log_status``,
    ``checkpoint_path`` and ``message`` (of the session log, or of the log message)."""

    _fields = (Field(1, "wall_time", DOUBLE), Field(2, "step", INT64), Field(3, "file_version", STRING, oneof="what"),
               Field(4, "graph_def", BYTES, oneof="what"), Field(5, "summary", Summary, oneof="what"),
               Field(6, "log_message", LogMessage, oneof="what"), Field(7, "session_log", SessionLog, oneof="what"),
               Field(8, "tagged_run_metadata", TaggedRunMetadata, oneof="what"),
               Field(9, "meta_graph_def", BYTES, oneof="what"), Field(10, "source_metadata", SourceMetadata))

    @property
    def scalars(self):
        """tag → value of the summary's scalar (simple_value) values; empty for other events."""
        if not self.HasField("summary"):
            return {}
        return {v.tag: v.simple_value for v in self.summary.value if v.WhichOneof("value") == "simple_value"}

    @property
    def tags(self):
        """The tag of every value of the summary, in order; empty for other events."""
        return tuple(v.tag for v in self.summary.value) if self.HasField("summary") else ()

    @property
    def session_log_status(self):
        """The session log's status (SessionLog.START, STOP, CHECKPOINT), 0 for other events."""
        return self.session_log.status if self.HasField("session_log") else 0

    @property
    def checkpoint_path(self):
        """The session log's checkpoint_path; "" for other events."""
        return self.session_log.checkpoint_path if self.HasField("session_log") else ""

    @property
    def message(self):
        """The session log's msg or the log message's text; "" for other events."""
        if self.HasField("session_log"):
            return self.session_log.msg
        return self.log_message.message if self.HasField("log_message") else ""
