# Type information for _event_proto.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
from typing import Type

from ._proto import Message, ProtoDecodeError as ProtoDecodeError, RepeatedField

class HistogramProto(Message):
    min: float
    max: float
    num: float
    sum: float
    sum_squares: float
    bucket_limit: RepeatedField[float]
    bucket: RepeatedField[float]

class Dim(Message):
    size: int
    name: str

class TensorShapeProto(Message):
    dim: RepeatedField[Dim]
    unknown_rank: bool
    Dim: Type[Dim]

class TensorProto(Message):
    dtype: int
    tensor_shape: TensorShapeProto
    version_number: int
    tensor_content: bytes
    half_val: RepeatedField[int]
    float_val: RepeatedField[float]
    double_val: RepeatedField[float]
    int_val: RepeatedField[int]
    string_val: RepeatedField[bytes]
    scomplex_val: RepeatedField[float]
    int64_val: RepeatedField[int]
    bool_val: RepeatedField[bool]
    dcomplex_val: RepeatedField[float]
    uint32_val: RepeatedField[int]
    uint64_val: RepeatedField[int]

class PluginData(Message):
    plugin_name: str
    content: bytes

class SummaryMetadata(Message):
    plugin_data: PluginData
    display_name: str
    summary_description: str
    data_class: int
    PluginData: Type[PluginData]

class Image(Message):
    height: int
    width: int
    colorspace: int
    encoded_image_string: bytes

class Audio(Message):
    sample_rate: float
    num_channels: int
    length_frames: int
    encoded_audio_string: bytes
    content_type: str

class Value(Message):
    node_name: str
    tag: str
    metadata: SummaryMetadata
    simple_value: float
    obsolete_old_style_histogram: bytes
    image: Image
    histo: HistogramProto
    audio: Audio
    tensor: TensorProto

class Summary(Message):
    value: RepeatedField[Value]
    Value: Type[Value]
    Image: Type[Image]
    Audio: Type[Audio]

class LogMessage(Message):
    level: int
    message: str
    UNKNOWN: int
    DEBUGGING: int
    INFO: int
    WARN: int
    ERROR: int
    FATAL: int

class SessionLog(Message):
    status: int
    checkpoint_path: str
    msg: str
    STATUS_UNSPECIFIED: int
    START: int
    STOP: int
    CHECKPOINT: int

class TaggedRunMetadata(Message):
    tag: str
    run_metadata: bytes

class SourceMetadata(Message):
    writer: str

class Event(Message):
    wall_time: float
    step: int
    file_version: str
    graph_def: bytes
    summary: Summary
    log_message: LogMessage
    session_log: SessionLog
    tagged_run_metadata: TaggedRunMetadata
    meta_graph_def: bytes
    source_metadata: SourceMetadata
    @property
    def scalars(self) -> dict[str, float]: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def session_log_status(self) -> int: ...
    @property
    def checkpoint_path(self) -> str: ...
    @property
    def message(self) -> str: ...
