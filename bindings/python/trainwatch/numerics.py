"""NaN/Inf scanning at memory bandwidth, tensor statistics, and TF's check_numerics.

The GIL is released while the SIMD kernels read the data, so other Python threads keep running.
"""
from typing import NamedTuple

from . import native
from .tensors import borrow


class ScanResult(NamedTuple):
    nan_count: int
    pos_inf_count: int
    neg_inf_count: int
    first_nonfinite_index: int  # row-major index of the first NaN or ±Inf; -1 when all finite

    @property
    def all_finite(self):
        return self.first_nonfinite_index < 0


class TensorStats(NamedTuple):
    element_count: int
    finite_count: int
    nan_count: int
    pos_inf_count: int
    neg_inf_count: int
    first_nonfinite_index: int
    min: float  # over the finite elements; NaN when there are none
    max: float
    mean: float


def scan(tensor):
    """Counts the NaN, +Inf and -Inf elements of an array.

    Args:
      tensor: an array of any float dtype (numpy, torch tensor, …), strided or not; a
        CUDA tensor is counted on its device (contiguous).

    Returns:
      A ``ScanResult``: the three counts and the row-major index of the first bad element (-1
      when every element is finite).

    Raises:
      InvalidArgumentError: ``tensor`` is not an array the library can read.
    """
    held = borrow(tensor, "tensor")
    r = native.scan(held.tensors()[0])
    return ScanResult(r.nan_count, r.pos_inf_count, r.neg_inf_count, r.first_nonfinite_index)


def tensor_stats(tensor):
    """``scan`` plus the finite elements' min, max and mean, in one pass (the "health pill" of TF's
    debugger).

    Args:
      tensor: an array of any float dtype.

    Returns:
      A ``TensorStats``.

    Raises:
      InvalidArgumentError: ``tensor`` is not an array the library can read.
    """
    held = borrow(tensor, "tensor")
    s = native.tensor_stats(held.tensors()[0])
    return TensorStats(s.element_count, s.finite_count, s.nan_count, s.pos_inf_count, s.neg_inf_count,
                       s.first_nonfinite_index, s.min, s.max, s.mean)


def check_numerics(tensor, message, name=None):
    """Checks a tensor for NaN and Inf values, as ``tf.debugging.check_numerics``.

    Args:
      tensor: an array of any float dtype.
      message: the prefix of the error's message.
      name: accepted for TF code.

    Returns:
      ``tensor`` itself, when every element is finite.

    Raises:
      InvalidArgumentError: "<message> : Tensor had NaN values" (or "Inf", "Inf and NaN").
    """
    del name
    held = borrow(tensor, "tensor")
    native.check_numerics(held.tensors()[0], message)
    return tensor
