# Type information for state_ops.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
from typing import Callable, Optional

from ._step import StepContext

def assign(ref: object, value: object, validate_shape: Optional[bool] = ..., use_locking: Optional[bool] = ...,
           name: Optional[str] = ...) -> Callable[[StepContext], None]: ...
