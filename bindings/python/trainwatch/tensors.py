"""Python objects as library tensors (zero copy), library tensors as values, library dtypes as numpy
dtypes.

Arrays cross into the library without copying: numpy arrays and anything else with the buffer protocol,
torch tensors through ``__dlpack__`` (bfloat16 and bool included), device arrays through
``__cuda_array_interface__`` (``trainwatch.devices``), and Python numbers as 0-d values. The native
``TensorSet`` keeps each object alive for as long as the library borrows its memory.

numpy has no bfloat16 or float8: values of those dtypes come back as their bits (``uint16`` /
``uint8``). ``bfloat16_to_float32`` widens bfloat16 bits exactly; with torch,
``torch.from_numpy(bits).view(torch.bfloat16)`` gives the tensor back.
"""
import numpy as np

from . import native

NUMPY_DTYPES = {
    native.TW_BOOL: np.bool_, native.TW_INT8: np.int8, native.TW_INT16: np.int16,
    native.TW_INT32: np.int32, native.TW_INT64: np.int64, native.TW_UINT8: np.uint8,
    native.TW_UINT16: np.uint16, native.TW_UINT32: np.uint32, native.TW_UINT64: np.uint64,
    native.TW_FLOAT16: np.float16, native.TW_BFLOAT16: np.uint16, native.TW_FLOAT32: np.float32,
    native.TW_FLOAT64: np.float64, native.TW_FLOAT8_E4M3FN: np.uint8, native.TW_FLOAT8_E5M2: np.uint8,
}


def to_value(tensor):
    """A library tensor as tf.Session.run returns a value: a numpy copy, and a numpy scalar
    (``np.float32(3.0)``, ``np.int64(2)``) for a 0-d tensor. A device tensor's value is a copy on its
    device (a torch tensor, 0-d included), made by the device registered for it."""
    if tensor.on_device():
        from . import devices
        return devices.copy_of(tensor)
    array = native.to_numpy(tensor)
    return array[()] if array.ndim == 0 else array


def borrow(value, kind="value", name="", writable=False):
    """A one-tensor ``native.TensorSet`` viewing ``value``; the view lives as long as the set."""
    held = native.TensorSet()
    held.add(name, value, writable, kind)
    return held


def bfloat16_to_float32(bits):
    """Converts bfloat16 values, given as their bits, to float32.

    Args:
      bits: a uint16 array, as trainwatch returns bfloat16 results.

    Returns:
      A float32 numpy array of the same shape.

    Raises:
      TypeError: ``bits`` is not uint16.
    """
    bits = np.asarray(bits)
    if bits.dtype != np.uint16:
        raise TypeError(f"bfloat16 bits must be uint16, got {bits.dtype}")
    return (bits.astype(np.uint32) << 16).view(np.float32)
