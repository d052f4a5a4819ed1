"""scan, tensor_stats and check_numerics over numpy and torch arrays."""
import threading

import numpy as np
import pytest
import torch

import trainwatch as tw


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_scan_counts_nan_and_inf(dtype):
    a = np.zeros(1000, dtype)
    a[[5, 7]] = np.nan
    a[9] = np.inf
    a[11] = -np.inf
    r = tw.scan(a)
    assert r == (2, 1, 1, 5) and not r.all_finite


def test_scan_of_finite_and_integer_arrays():
    assert tw.scan(np.ones((3, 3))).all_finite
    assert tw.scan(np.arange(10)) == (0, 0, 0, -1)


def test_scan_of_a_strided_view_reports_row_major_indices():
    a = np.zeros((4, 6), np.float32)
    a[2, 4] = np.nan
    assert tw.scan(a[:, ::2]).first_nonfinite_index == 2 * 3 + 2


def test_tensor_stats_over_finite_values():
    s = tw.tensor_stats(np.array([1.0, 2.0, np.nan, 6.0], np.float32))
    assert isinstance(s, tw.TensorStats)
    assert (s.element_count, s.finite_count, s.nan_count) == (4, 3, 1)
    assert (s.min, s.max, s.mean) == (1.0, 6.0, 3.0)


def test_tensor_stats_of_a_strided_torch_view_and_of_no_finite_element():
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)[:, 1::2]  # 1 3 5 7 9 11
    s = tw.tensor_stats(t)
    assert (s.element_count, s.finite_count, s.first_nonfinite_index) == (6, 6, -1)
    assert (s.min, s.max, s.mean) == (1.0, 11.0, 6.0)
    empty = tw.tensor_stats(np.array([np.inf, np.nan], np.float32))
    assert (empty.finite_count, empty.pos_inf_count, empty.nan_count, empty.first_nonfinite_index) == (0, 1, 1, 0)
    assert np.isnan(empty.mean)


def test_check_numerics_returns_the_tensor_or_raises_tf_text():
    good = torch.ones(3)
    assert tw.check_numerics(good, "fine") is good
    with pytest.raises(tw.InvalidArgumentError, match="grads : Tensor had NaN values"):
        tw.check_numerics(np.array([np.nan], np.float32), "grads")
    with pytest.raises(tw.InvalidArgumentError, match="x : Tensor had Inf and NaN values"):
        tw.check_numerics(np.array([np.nan, np.inf]), "x")


def test_scan_releases_the_gil_while_the_kernel_reads():
    big = np.ones(32 << 20, np.float32)  # 128 MiB: a scan takes milliseconds
    ticks = [0]
    running = threading.Event()
    done = threading.Event()

    def count():
        running.set()
        while not done.is_set():
            ticks[0] += 1
    counter = threading.Thread(target=count)
    counter.start()
    running.wait()
    try:
        most = 0
        for _ in range(5):
            before = ticks[0]
            tw.scan(big)
            most = max(most, ticks[0] - before)
    finally:
        done.set()
        counter.join()
    assert most > 1000  # the other thread ran during the C call
