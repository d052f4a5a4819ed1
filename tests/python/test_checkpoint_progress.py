"""Progress of long saves and restores (C26): trainwatch.checkpoint.set_progress_sink sends each
operation's reports to a function — bytes never going back, the last report finished with every byte —
or, by default, to the "trainwatch" logger. every_n_secs=0 reports every chunk: nothing here depends on
timing."""
import logging

import numpy as np
import pytest

import trainwatch as tw
from trainwatch.checkpoint import set_progress_sink


@pytest.fixture
def variables():
    """Three float32 arrays of 3 MiB: several 4 MiB chunks in all."""
    return {name: np.arange(3 << 18, dtype=np.float32) * (i + 1) for i, name in enumerate("abc")}


@pytest.fixture(autouse=True)
def default_sink():
    yield
    set_progress_sink()


def assert_one_operation(reports, kind, path, nbytes):
    assert len(reports) >= 2
    assert {r[0] for r in reports} == {kind} and {r[1] for r in reports} == {path}
    done = [r[2] for r in reports]
    assert done == sorted(done) and {r[3] for r in reports} == {nbytes}
    assert [r[5] for r in reports] == [False] * (len(reports) - 1) + [True]
    assert done[-1] == nbytes


def test_save_and_restore_report_to_the_function_C26(tmp_path, variables):
    reports = []
    set_progress_sink(lambda *report: reports.append(report), every_n_secs=0)
    saver = tw.Saver(variables)
    path = saver.save(str(tmp_path / "model.ckpt"), global_step=3)
    nbytes = sum(v.nbytes for v in variables.values())
    assert_one_operation(reports, "save", path, nbytes)
    reports.clear()
    expected = {k: v.copy() for k, v in variables.items()}
    for v in variables.values():
        v[:] = 0
    saver.restore(path)
    assert_one_operation(reports, "restore", path, nbytes)
    assert all(np.array_equal(variables[k], expected[k]) for k in variables)


def test_an_exception_in_the_function_is_dropped_C26(tmp_path, variables):
    def fails(*report):
        raise RuntimeError("a progress bar's bug")
    set_progress_sink(fails, every_n_secs=0)
    assert tw.Saver(variables).save(str(tmp_path / "model.ckpt"), global_step=1)


def test_the_default_sink_logs_progress_lines_C26(tmp_path, variables, caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    set_progress_sink(every_n_secs=0)
    path = tw.Saver(variables).save(str(tmp_path / "model.ckpt"), global_step=2)
    lines = [r.getMessage() for r in caplog.records if r.name == "trainwatch"]
    assert any(m.startswith(f"Saving checkpoint {path}: ") and " MB/s, " in m and m.endswith(" s left") for m in lines)
    assert sum(m.startswith(f"Saved checkpoint {path}: 9.4 MB in ") for m in lines) == 1


def test_bad_every_n_secs_is_refused_C26():
    with pytest.raises(tw.InvalidArgumentError, match="every_n_secs must be a finite number >= 0, not -1"):
        set_progress_sink(every_n_secs=-1)


def test_a_replaced_sink_stays_alive_for_the_operations_that_began_with_it_C26():
    """A save keeps calling the sink set when it began: replacing the sink must not free the old one."""
    import gc
    import weakref
    from trainwatch import checkpoint
    set_progress_sink(lambda *report: None, every_n_secs=0)
    first = weakref.ref(checkpoint._progress_sinks[-1])
    set_progress_sink(lambda *report: None, every_n_secs=0)
    set_progress_sink()
    gc.collect()
    assert first() is not None
