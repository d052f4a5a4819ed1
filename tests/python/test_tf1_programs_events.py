"""TF1 programs that read event files back, write their own summaries and make graph-only calls run
unchanged (after ``tf.`` → ``tw.`` and the graph → step-function edit); errors are reported once and
point at the caller; help() reads like TF's.

Behaviour IDs: B39 (the summary hook's START and summaries), B21 (graph writes TF makes, which have
no counterpart), B50, B51 (event files as TF's messages, graph-only writer calls), H34 (errors reported once).
"""
import inspect
import logging
import math
import re
import struct
import traceback

import numpy as np
import pytest

import trainwatch as tw


def events_of(directory):
    return [e for path in sorted(directory.glob("events.out.tfevents.*")) for e in tw.summary.summary_iterator(path)]


# -- Event files read as TF's messages (B50) ---------------------------------------------------------


def test_events_of_a_training_session_read_back_as_tf_events_B39_B50(tmp_path):
    weights = {"w": np.zeros(4, np.float32)}

    def train_step(ctx):
        weights["w"] += 1.0
        return {"loss": np.float32(10.0 / (ctx.global_step + 1))}

    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), variables=weights, save_summaries_steps=2,
                                     save_checkpoint_secs=None, log_step_count_steps=None) as sess:
        for _ in range(5):
            sess.run(train_step)

    # A TF1 reading loop, unchanged: tf.compat.v1.train.summary_iterator → tw.train.summary_iterator.
    losses = {}
    for path in sorted(tmp_path.glob("events.out.tfevents.*")):
        for event in tw.train.summary_iterator(str(path)):
            if event.HasField("summary"):
                for value in event.summary.value:
                    if value.tag == "loss":
                        losses[event.step] = value.simple_value
    assert losses == {1: pytest.approx(10.0), 3: pytest.approx(10.0 / 3), 5: pytest.approx(2.0)}

    events = events_of(tmp_path)
    first = events[0]
    assert first.WhichOneof("what") == "file_version" and first.file_version == "brain.Event:2"
    assert not first.HasField("summary") and first.step == 0 and first.wall_time > 1.5e9
    starts = [e for e in events if e.HasField("session_log")]
    assert starts and starts[0].session_log.status == tw.SessionLog.START  # B39: START on the first run
    assert starts[0].WhichOneof("what") == "session_log"
    scalar = next(e for e in events if e.HasField("summary") and e.summary.value[0].tag == "loss")
    assert scalar.summary.value[0].WhichOneof("value") == "simple_value"
    assert scalar.scalars == {"loss": scalar.summary.value[0].simple_value}  # the trainwatch shortcut agrees


def test_histograms_and_tensors_read_back_with_tf_fields_B50(tmp_path):
    values = np.array([0.5, 1.5, 1.5, 3.0, -2.0])
    shape = tw.summary.TensorShapeProto(dim=[tw.summary.TensorShapeProto.Dim(size=2)])
    tensor = tw.TensorProto(dtype=1, tensor_shape=shape, float_val=[0.25, 0.75])  # DT_FLOAT
    summary = tw.Summary(value=[tw.Summary.Value(tag="t", tensor=tensor)])
    summary.value.add(tag="image", image=tw.Summary.Image(height=1, width=2, encoded_image_string=b"\x89PNG"))
    with tw.summary.FileWriter(tmp_path) as writer:
        writer.add_summary({"weights": values}, global_step=7)
        writer.add_summary(summary, global_step=8)
        path = writer.path
    events = list(tw.summary.summary_iterator(path))
    histo_event = next(e for e in events if e.step == 7)
    value = histo_event.summary.value[0]
    assert value.tag == "weights" and value.WhichOneof("value") == "histo" and value.HasField("histo")
    histo = value.histo
    assert (histo.min, histo.max, histo.num, histo.sum) == (-2.0, 3.0, 5.0, values.sum())
    assert histo.sum_squares == pytest.approx((values ** 2).sum())
    assert len(histo.bucket) == len(histo.bucket_limit) and sum(histo.bucket) == 5.0
    read = next(e for e in events if e.step == 8).summary
    assert read == summary  # every field, the nested ones included, as written
    assert list(read.value[0].tensor.float_val) == [0.25, 0.75]
    assert read.value[0].tensor.tensor_shape.dim[0].size == 2
    assert read.value[1].image.encoded_image_string == b"\x89PNG"


def test_a_summary_built_like_tf_round_trips_through_file_writer_B50(tmp_path):
    # TF1: tf.Summary(value=[tf.Summary.Value(tag=..., simple_value=...)]) and summary.value.add(...).
    summary = tw.Summary(value=[tw.Summary.Value(tag="accuracy", simple_value=0.75)])
    summary.value.add(tag="lr", simple_value=1e-3)
    data = summary.SerializeToString()
    assert tw.Summary.FromString(data) == summary
    with tw.summary.FileWriter(tmp_path / "logs", None) as writer:  # FileWriter(logdir, graph)
        writer.add_summary(summary, global_step=3)
        writer.add_summary(data, 4)  # its serialized bytes, as before
        path = writer.path
    read = [e for e in tw.summary.summary_iterator(path) if e.HasField("summary")]
    assert [(e.step, [(v.tag, v.simple_value) for v in e.summary.value]) for e in read] == [
        (3, [("accuracy", 0.75), ("lr", pytest.approx(1e-3))]),
        (4, [("accuracy", 0.75), ("lr", pytest.approx(1e-3))])]


def test_the_wire_format_is_protobufs(tmp_path):
    # The bytes a protobuf library writes for Summary{value{tag:"a" simple_value:2.5}}.
    expected = b"\x0a\x08\x0a\x01a\x15" + struct.pack("<f", 2.5)
    assert tw.Summary(value=[tw.Summary.Value(tag="a", simple_value=2.5)]).SerializeToString() == expected
    # A negative int64 takes ten bytes; packed doubles one length-delimited field; both read back.
    event = tw.Event(step=-1, wall_time=1.5, summary=tw.Summary(value=[tw.Summary.Value(
        tag="h", histo=tw.HistogramProto(bucket_limit=[1.0, math.inf], bucket=[2.0, 3.0]))]))
    data = event.SerializeToString()
    assert b"\x10" + b"\xff" * 9 + b"\x01" in data
    again = tw.Event.FromString(data)
    assert again.step == -1 and list(again.summary.value[0].histo.bucket_limit) == [1.0, math.inf]
    # Unknown fields survive a round trip (a newer writer's additions).
    with_unknown = data + b"\xa8\x06\x07"  # field 101, varint 7
    assert tw.Event.FromString(with_unknown).SerializeToString() == with_unknown


def test_messages_behave_like_protobufs():
    event = tw.Event()
    assert not event.HasField("summary") and event.WhichOneof("what") is None
    assert event.summary.value == [] and not event.HasField("summary")  # reading sets nothing
    event.summary.value.add(tag="x", simple_value=1.0)  # writing through it does
    assert event.HasField("summary") and event.WhichOneof("what") == "summary"
    event.file_version = "brain.Event:2"  # a oneof holds one member
    assert event.WhichOneof("what") == "file_version" and not event.HasField("summary")
    with pytest.raises(ValueError):
        event.HasField("step")  # a proto3 scalar has no presence, as in protobuf
    with pytest.raises(AttributeError):
        tw.Summary.Value(no_such_field=1)
    with pytest.raises(TypeError, match="simple_value"):
        tw.Summary.Value(tag="x", simple_value="high")
    log = tw.SessionLog(tw.SessionLog.CHECKPOINT, "/ckpt/model.ckpt-5", "saved")
    assert (log.status, log.checkpoint_path, log.msg) == (3, "/ckpt/model.ckpt-5", "saved")
    assert "checkpoint_path" in str(log) and tw.SessionLog.FromString(log.SerializeToString()) == log


def test_a_record_that_is_not_an_event_is_data_loss_B50(tmp_path):
    # Checksums intact, so only decoding can tell: file_version (field 3) holding bytes that are not UTF-8.
    data = b"\x1a\x02\xff\xfe"
    header = struct.pack("<Q", len(data))
    path = tmp_path / "events.out.tfevents.bad"
    path.write_bytes(header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data)))
    with pytest.raises(tw.DataLossError, match="not an Event"):
        list(tw.summary.summary_iterator(path))


def _masked_crc(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_events_copy_into_another_file_with_their_histograms(tmp_path):
    with tw.summary.FileWriter(tmp_path / "a") as writer:
        writer.add_summary({"w": np.arange(6.0)}, 1)
        writer.add_session_log(tw.SessionLog(status=tw.SessionLog.STOP), 2)
        source = writer.path
    with tw.summary.FileWriter(tmp_path / "b") as copy:
        for event in tw.summary.summary_iterator(source):
            copy.add_event(event)
        copied = copy.path

    def essence(path):
        return [(e.step, e.WhichOneof("what"), e.summary, e.session_log) for e in tw.summary.summary_iterator(path)
                if not e.HasField("file_version")]

    assert essence(copied) == essence(source) and len(essence(source)) == 2


# -- Graph-only calls (B51) --------------------------------------------------------------------------


class _Graph:
    """What TF code passes as a graph (sess.graph, tf.get_default_graph()): nothing trainwatch reads."""


def test_graph_only_calls_are_accepted_and_write_nothing_B51(tmp_path):
    graph = _Graph()
    writer = tw.summary.FileWriter(str(tmp_path), graph)
    writer.add_graph(graph)
    writer.add_graph(graph, global_step=3)
    writer.add_meta_graph(object(), global_step=3)
    writer.add_run_metadata(object(), "step3", global_step=3)
    writer.add_summary(tw.Summary(value=[tw.Summary.Value(tag="loss", simple_value=1.0)]), 3)
    writer.close()
    assert [e.WhichOneof("what") for e in events_of(tmp_path)] == ["file_version", "summary"]

    cached = tw.summary.FileWriterCache.get(str(tmp_path / "cached"))
    assert tw.summary.FileWriterCache.get(str(tmp_path / "cached")) is cached
    cached.add_graph(graph)
    cached.add_meta_graph(object())
    cached.add_run_metadata(object(), "tag")
    cached.add_summary({"x": 2.0}, 1)
    tw.summary.FileWriterCache.clear()
    assert [e.scalars for e in events_of(tmp_path / "cached") if e.HasField("summary")] == [{"x": 2.0}]

    path = tw.train.write_graph(graph, str(tmp_path / "graphs"), "graph.pbtxt")
    assert path == str(tmp_path / "graphs" / "graph.pbtxt")
    assert not (tmp_path / "graphs").exists()  # nothing written


# -- Errors reported once, pointing at the caller (H34) ----------------------------------------------


def _frames(error):
    return traceback.extract_tb(error.__traceback__)


def _package_frame(frame):
    return "/trainwatch/" in frame.filename.replace("\\", "/")


def test_a_failed_run_is_reported_once_H34(tmp_path, capfd, caplog):
    def step(ctx):
        raise ValueError("the user's own bug")

    caplog.set_level(logging.WARNING, logger="trainwatch")
    with pytest.raises(ValueError, match="the user's own bug"):
        with tw.MonitoredTrainingSession(variables={"w": np.zeros(2)}) as sess:
            sess.run(step)
    hook = tw.LoggingTensorHook(["not_published"], every_n_iter=1)
    with pytest.raises(tw.NotFoundError, match="not_published"):
        with tw.MonitoredTrainingSession(hooks=[hook]) as sess:
            sess.run(lambda ctx: {"loss": np.float32(1.0)})
    out, err = capfd.readouterr()
    assert "the user's own bug" not in out + err and "not_published" not in out + err
    assert not [r for r in caplog.records if "the user's own bug" in r.getMessage()
                or "not_published" in r.getMessage()]


def test_a_hooks_exception_comes_out_unchanged_with_where_it_was_raised_as_a_note_H34(capfd):
    class Failing(tw.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise KeyError("raised by the hook")

    with pytest.raises(KeyError) as caught:
        with tw.MonitoredTrainingSession(hooks=[Failing()]) as sess:
            sess.run(lambda ctx: None)
    assert caught.value.args == ("raised by the hook",)  # the very exception
    assert caught.value.__notes__ == ["trainwatch: during hook 'Failing' after_run"]  # said once, not repeated
    out, err = capfd.readouterr()
    assert "raised by the hook" not in out + err


def test_a_library_error_points_at_the_users_call_H34(tmp_path):
    with tw.MonitoredTrainingSession(variables={"w": np.zeros(2)}) as sess:
        with pytest.raises(tw.NotFoundError) as caught:
            sess.run("no_such_variable")  # THE CALL
    frames = _frames(caught.value)
    user = [f for f in frames if not _package_frame(f)]
    assert user[-1].line.endswith("# THE CALL"), frames
    assert len([f for f in frames if _package_frame(f)]) <= 1, frames  # at most the entry point

    with pytest.raises(tw.NotFoundError) as caught:
        list(tw.summary_iterator(tmp_path / "missing"))  # THE CALL
    frames = _frames(caught.value)
    assert [f for f in frames if not _package_frame(f)][-1].line.endswith("# THE CALL"), frames
    assert len([f for f in frames if _package_frame(f)]) <= 1, frames


def test_an_error_in_a_hook_points_at_the_hook_line_H34():
    class ReadsAMissingName(tw.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.session.run("missing_in_hook")  # THE HOOK LINE

    with pytest.raises(tw.NotFoundError) as caught:
        with tw.MonitoredTrainingSession(hooks=[ReadsAMissingName()]) as sess:
            sess.run(lambda ctx: None)
    frames = _frames(caught.value)
    user = [f for f in frames if not _package_frame(f)]
    assert user[-1].line.endswith("# THE HOOK LINE"), frames
    assert any(f.name == "test_an_error_in_a_hook_points_at_the_hook_line_H34" for f in user)
    assert len([f for f in frames if _package_frame(f)]) <= 1, frames


# -- help() reads like TF's ---------------------------------------------------------------------------

_ID = re.compile(r"\b[HWSTBCD][0-9]+\b")  # the behaviour IDs of docs/tf-semantics.md
_CALLBACKS = {"begin", "after_create_session", "before_run", "after_run", "end", "on_error"}


def _public_objects():
    """(qualified name, object) of every public module, class, function, method and property."""
    modules = [tw, tw.summary, tw.train, tw.estimator, tw.errors, tw.distributed]
    seen = set()
    for module in modules:
        yield module.__name__, module
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if id(value) in seen or not (inspect.isclass(value) or callable(value)):
                continue
            seen.add(id(value))
            yield name, value
            if inspect.isclass(value):
                for member_name, member in inspect.getmembers(value):
                    if member_name.startswith("_"):
                        continue  # __init__ is documented with its class
                    if isinstance(inspect.getattr_static(value, member_name), property):
                        yield f"{name}.{member_name}", inspect.getattr_static(value, member_name)
                    elif (inspect.isfunction(member) or inspect.ismethod(member)) and \
                            member.__module__.startswith("trainwatch"):  # not threading.Thread's own
                        yield f"{name}.{member_name}", member


def test_help_cites_no_behaviour_ids():
    cited = {name: _ID.findall(obj.__doc__) for name, obj in _public_objects()
             if obj.__doc__ and _ID.search(obj.__doc__)
             and not (inspect.isclass(obj) and issubclass(obj, tuple) and obj.__doc__.startswith(obj.__name__ + "("))}
    assert not cited, cited  # IDs belong in comments and docs/tf-semantics.md


def _documented(doc, parameter):
    return re.search(rf"^\s+\*{{0,2}}{re.escape(parameter)}:", doc or "", re.M) is not None


def test_help_documents_every_argument_like_tf():
    undocumented = {}
    for name, obj in _public_objects():
        if inspect.ismodule(obj) or isinstance(obj, property) or name.rsplit(".", 1)[-1] in _CALLBACKS and \
                not name.startswith("SessionRunHook."):
            continue
        if inspect.isclass(obj):
            if issubclass(obj, (BaseException, tuple)):
                continue  # exceptions take a message; named tuples list their fields
            function, doc = obj.__init__, (obj.__doc__ or "") + (obj.__init__.__doc__ or "")
            if function is object.__init__:
                continue
        else:
            function, doc = obj, obj.__doc__
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            continue
        missing = [p.name for p in parameters if p.name not in ("self", "cls")
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and not _documented(doc, p.name)]
        if missing:
            undocumented[name] = missing
    assert not undocumented, undocumented  # each argument under "Args:", as TF's docstrings have them


def test_help_of_the_main_entry_points_has_returns_and_raises():
    for function in (tw.MonitoredTrainingSession.run, tw.summary_iterator, tw.load_variable, tw.latest_checkpoint,
                     tw.train.write_graph, tw.summary.FileWriter.add_summary, tw.Saver.save):
        doc = inspect.getdoc(function)
        assert "Args:" in doc and ("Returns:" in doc or "Yields:" in doc or "Raises:" in doc), function
    assert "Raises:" in inspect.getdoc(tw.MonitoredTrainingSession.run)
    assert "Raises:" in inspect.getdoc(tw.summary_iterator)


def test_int64_fields_take_every_int64():
    event = tw.Event(step=2**63 - 1)
    assert tw.Event.FromString(event.SerializeToString()).step == 2**63 - 1
    assert tw.Event(step=np.int64(-5)).step == -5 and tw.Event(step=7.0).step == 7
    with pytest.raises(TypeError, match="step"):
        tw.Event(step=1.5)
