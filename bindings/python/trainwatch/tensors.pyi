# Type information for tensors.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
from typing import Any, Dict, Type

import numpy as np
import numpy.typing as npt

NUMPY_DTYPES: Dict[int, Type[np.generic]]

def to_value(tensor: Any) -> Any: ...
def borrow(value: Any, kind: str = ..., name: str = ..., writable: bool = ...) -> Any: ...
def bfloat16_to_float32(bits: npt.ArrayLike) -> npt.NDArray[np.float32]: ...
