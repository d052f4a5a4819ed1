"""Option metadata comes from the library (tw_option_info_by_key / _by_name): the Python package reads an
option's type from it, and the tables the Go, Rust and C# bindings still spell out (their option
enums) must agree with it, key for key and name for name."""
import pathlib
import re

import numpy as np
import pytest

import trainwatch as tw
from trainwatch import native

ROOT = pathlib.Path(__file__).resolve().parents[2]
TYPE_NAMES = {native.TW_OPTION_TYPE_INT64: "int64", native.TW_OPTION_TYPE_DOUBLE: "float64",
              native.TW_OPTION_TYPE_STRING: "string"}


def c_name(camel):
    """"CheckpointEveryNSteps" → "TW_OPT_CHECKPOINT_EVERY_N_STEPS"."""
    return "TW_OPT_" + re.sub(r"(?<!^)(?=[A-Z])", "_", camel).upper()


def test_the_library_describes_its_options():
    info = native.option_info(native.TW_OPT_MAX_WAIT_SECS)
    assert (info.name, info.type, info.double_default) == ("TW_OPT_MAX_WAIT_SECS", native.TW_OPTION_TYPE_DOUBLE, 1800.0)
    info = native.option_info_named("max_to_keep")
    assert (info.key, info.type, info.int64_default, info.int64_min) == (native.TW_OPT_MAX_TO_KEEP,
                                                                         native.TW_OPTION_TYPE_INT64, 5, 0)
    assert info.read_by & native.TW_OPTION_READ_BY_SAVER
    with pytest.raises(tw.errors.NotFoundError, match="no option named 'nope'"):
        native.option_info_named("nope")


def test_a_double_option_given_an_int_is_set_as_a_double(tmp_path):
    # The type comes from the library's table: an int for a double option (max_wait_secs, a
    # checkpoint period in seconds) is converted, not refused as "of type double, not int64".
    w = np.zeros(2, "float32")
    with tw.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_secs=60, max_wait_secs=10,
                                     save_summaries_steps=None, log_step_count_steps=None,
                                     variables={"w": w}) as session:
        session.run(lambda ctx: {})


def described(key):
    info = native.option_info(key)
    return info.name, TYPE_NAMES[info.type]


def test_the_csharp_enum_agrees_with_the_library():
    text = (ROOT / "bindings/csharp/src/Option.cs").read_text()
    body = text[text.index("public enum Option {"):]
    entries = re.findall(r"^\s+(\w+) = (\d+),", body[:body.index("}")], flags=re.M)
    assert len(entries) > 30
    for camel, key in entries:
        assert described(int(key))[0] == c_name(camel), camel


def test_the_rust_enum_agrees_with_the_library():
    text = (ROOT / "bindings/rust/trainwatch/src/options.rs").read_text()
    entries = re.findall(r"Opt::(\w+) => (\d+),", text)
    assert len(entries) > 15
    for camel, key in entries:
        assert described(int(key))[0] == c_name(camel), camel


def test_the_go_constants_agree_with_the_library():
    text = (ROOT / "bindings/go/options.go").read_text()
    entries = re.findall(r"^\s+Opt(\w+)\s+Option = C\.(TW_OPT_\w+)\s+// (\w+)", text, flags=re.M)
    assert len(entries) > 15
    for camel, name, type_name in entries:
        info = native.option_info_named(name)
        assert info.name == c_name(camel) == name
        assert TYPE_NAMES[info.type] == type_name, name
