"""trainwatch.summary: tf.compat.v1.summary's FileWriter writes event files that summary_iterator reads
back with the same values; a FileWriter is what the hooks' summary_writer takes (B27, B35)."""
import struct

import numpy as np
import pytest
import torch

import trainwatch as tw
from trainwatch.summary import Event, FileWriter, SessionLog, summary_iterator


def serialized_scalar_summary(tag, value):
    """Summary{value{tag, simple_value}} encoded by hand: field 1 (bytes) holding fields 1 and 2 (float)."""
    tag_bytes = tag.encode()
    value_message = b"\x0a" + bytes([len(tag_bytes)]) + tag_bytes + b"\x15" + struct.pack("<f", value)
    return b"\x0a" + bytes([len(value_message)]) + value_message


def test_the_public_names_are_tf_compat_v1_summary_s():
    assert tw.summary.FileWriter is FileWriter and tw.summary.summary_iterator is summary_iterator
    assert tw.summary_iterator is summary_iterator  # tf.compat.v1.train's name stays
    for method in ["add_summary", "add_session_log", "add_event", "get_logdir", "flush", "close", "reopen"]:
        assert callable(getattr(FileWriter, method)), method


def test_scalars_and_histograms_round_trip(tmp_path):
    with FileWriter(tmp_path / "logs") as writer:
        assert writer.get_logdir() == str(tmp_path / "logs")
        writer.add_summary({"loss": 0.5, "acc": np.float32(0.25), "lr": np.array(1e-3)}, global_step=3)
        writer.add_summary({"weights": np.arange(10.0), "grads": torch.ones(2, 3)}, global_step=4)
        writer.add_summary({"default_step": 7.0})
        path = writer.path
    assert path.startswith(str(tmp_path / "logs" / "events.out.tfevents."))
    events = list(summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    scalars = [(e.step, tag, value) for e in events for tag, value in e.scalars.items()]
    assert scalars == [(3, "loss", 0.5), (3, "acc", 0.25), (3, "lr", np.float32(1e-3)), (0, "default_step", 7.0)]
    histograms = [(e.step, e.tags) for e in events if e.tags and not e.scalars]
    assert histograms == [(4, ("weights",)), (4, ("grads",))]


def test_serialized_summaries_are_written_as_given(tmp_path):
    class Message:  # what a protobuf message offers (TF's tf.compat.v1.Summary)
        def SerializeToString(self):
            return serialized_scalar_summary("from_proto", 2.5)

    with FileWriter(tmp_path) as writer:
        writer.add_summary(serialized_scalar_summary("raw", -1.5), 10)
        writer.add_summary(bytearray(serialized_scalar_summary("array", 4.0)), 11)
        writer.add_summary(Message(), 12)
        with pytest.raises(tw.DataLossError):
            writer.add_summary(b"\x0a\x05ab", 13)  # a length past the end: not a Summary
        path = writer.path
    assert [(e.step, e.scalars) for e in summary_iterator(path)][1:] == [
        (10, {"raw": -1.5}), (11, {"array": 4.0}), (12, {"from_proto": 2.5})]


def test_session_logs_and_events_copy_into_another_file(tmp_path):
    with FileWriter(tmp_path / "a") as writer:
        writer.add_session_log(SessionLog(SessionLog.START), 1)
        writer.add_summary({"loss": 1.25}, 2)
        writer.add_session_log(SessionLog(SessionLog.CHECKPOINT, "/ckpt/model-2", "saved"), global_step=2)
        source = writer.path
    with FileWriter(tmp_path / "b") as copy:
        for event in summary_iterator(source):
            copy.add_event(event)
        copied = copy.path

    def essence(path):
        return [(e.step, e.scalars, e.session_log_status, e.checkpoint_path, e.message)
                for e in summary_iterator(path) if not e.HasField("file_version")]

    assert essence(source) == [(1, {}, SessionLog.START, "", ""), (2, {"loss": 1.25}, 0, "", ""),
                               (2, {}, SessionLog.CHECKPOINT, "/ckpt/model-2", "saved")]
    assert essence(copied) == essence(source)


def test_flush_makes_events_readable_and_close_ends_the_file(tmp_path):
    writer = FileWriter(tmp_path)
    writer.add_summary({"x": 1.0}, 1)
    writer.flush()
    first = writer.path
    assert [e.scalars for e in summary_iterator(first)] == [{}, {"x": 1.0}]
    writer.close()
    with pytest.raises(tw.FailedPreconditionError):
        writer.add_summary({"x": 2.0}, 2)
    writer.reopen()  # TF: later events go to a new file
    writer.add_summary({"x": 3.0}, 3)
    writer.close()
    assert writer.path != first
    assert [e.scalars for e in summary_iterator(writer.path)] == [{}, {"x": 3.0}]


def test_writers_of_one_directory_share_its_file(tmp_path):
    with FileWriter(tmp_path) as one, FileWriter(str(tmp_path)) as two:
        assert one.path == two.path


def test_wrong_types_are_type_errors(tmp_path):
    with FileWriter(tmp_path) as writer:
        with pytest.raises(TypeError, match="mapping of tags to values"):
            writer.add_summary(3.0, 1)
        with pytest.raises(TypeError, match="trainwatch.summary.Event"):
            writer.add_event({"loss": 1.0})


def test_hooks_write_through_a_file_writer_B27_B35(tmp_path):
    with FileWriter(tmp_path) as writer:
        hooks = [tw.StepCounterHook(every_n_steps=1, summary_writer=writer),
                 tw.SummarySaverHook(save_steps=1, summary_writer=writer, summary_op=["loss"])]
        with tw.MonitoredSession(hooks=hooks) as sess:
            for _ in range(3):
                sess.run(lambda ctx: {"loss": np.float32(ctx.global_step)})
        writer.add_summary({"after": 1.0}, 9)
        path = writer.path
    events = list(summary_iterator(path))
    assert [(e.step, e.scalars["loss"]) for e in events if "loss" in e.scalars] == [(1, 0.0), (2, 1.0), (3, 2.0)]
    assert any("global_step/sec" in e.scalars for e in events)
    assert events[-1].scalars == {"after": 1.0}
    with pytest.raises(TypeError, match="trainwatch.summary.FileWriter"):
        tw.StepCounterHook(every_n_steps=1, summary_writer=object())


def test_event_is_the_iterators_type(tmp_path):
    with FileWriter(tmp_path) as writer:
        path = writer.path
    assert all(isinstance(e, Event) for e in summary_iterator(path))
