"""SessionRunArgs.fetches in any structure; results mirror it (H20, H21)."""
import collections

import numpy as np
import pytest

import trainwatch as tw
from conftest import Recorder

Pair = collections.namedtuple("Pair", "first second")


def publish_step(ctx):
    return {"loss": np.float32(2.5), "acc": np.float64(0.75), "grad/w": np.arange(3, dtype=np.float32),
            "grad/b": np.ones(2, np.float32)}


def fetch(fetches):
    hook = Recorder(fetches=fetches)
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(publish_step)
    return hook.results[0]


def test_a_0d_value_is_a_numpy_scalar_as_tf_session_run_returns():
    result = fetch("loss")
    assert type(result) is np.float32 and result == 2.5
    assert type(fetch("global_step")) is np.int64


def test_a_name_gives_a_numpy_array():
    result = fetch("grad/w")
    assert isinstance(result, np.ndarray) and result.dtype == np.float32


def test_list_tuple_dict_and_nesting_H20():
    result = fetch({"a": ["loss", ("acc", {"deep": "loss"})], "b": "global_step"})
    assert set(result) == {"a", "b"}
    assert isinstance(result["a"], list) and isinstance(result["a"][1], tuple)
    assert result["a"][0] == 2.5 and result["a"][1][0] == 0.75 and result["a"][1][1]["deep"] == 2.5
    assert int(result["b"]) == 0


def test_named_tuples_keep_their_type():
    result = fetch(Pair("loss", "acc"))
    assert isinstance(result, Pair) and result.first == 2.5 and result.second == 0.75


def test_patterns_give_a_dict_of_matches():
    result = fetch(["grad/*", "loss"])
    assert sorted(result[0]) == ["grad/b", "grad/w"]
    np.testing.assert_array_equal(result[0]["grad/w"], [0, 1, 2])


def test_two_hooks_fetching_the_same_name_get_their_own_copy_H21():
    a, b = Recorder(fetches="loss"), Recorder(fetches=["loss"])
    with tw.MonitoredSession(hooks=[a, b]) as sess:
        sess.run(publish_step)
    assert a.results[0] == 2.5 and b.results[0][0] == 2.5
    assert a.results[0] is not b.results[0][0]


def test_results_are_copies_that_outlive_the_run():
    hook = Recorder(fetches="grad/w")
    with tw.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(2):
            sess.run(publish_step)
    assert hook.results[0].flags.owndata or hook.results[0].base is not None
    np.testing.assert_array_equal(hook.results[0], [0, 1, 2])


def test_variables_are_fetchable():
    w = np.full((2, 2), 3.0, np.float32)
    hook = Recorder(fetches="w")
    with tw.MonitoredSession(tw.ChiefSessionCreator(tw.Scaffold(variables={"w": w})), hooks=[hook]) as sess:
        sess.run(lambda ctx: None)
    np.testing.assert_array_equal(hook.results[0], w)


def test_bad_fetch_types_raise_type_error():
    with pytest.raises(TypeError, match="fetches must be names"):
        fetch(["loss", 3])
    with pytest.raises(ValueError):
        fetch("")


def test_a_formatter_gets_numpy_scalars_B9():
    seen = []
    hook = tw.LoggingTensorHook(["loss"], every_n_iter=1, formatter=lambda values: seen.append(values) or "")
    with tw.MonitoredSession(hooks=[hook]) as sess:
        sess.run(publish_step)
    assert seen == [{"loss": np.float32(2.5)}] and type(seen[0]["loss"]) is np.float32
