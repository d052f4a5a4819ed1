# Type information for numerics.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
from typing import Any, NamedTuple, Optional, TypeVar

_T = TypeVar("_T")

class ScanResult(NamedTuple):
    nan_count: int
    pos_inf_count: int
    neg_inf_count: int
    first_nonfinite_index: int
    @property
    def all_finite(self) -> bool: ...

class TensorStats(NamedTuple):
    element_count: int
    finite_count: int
    nan_count: int
    pos_inf_count: int
    neg_inf_count: int
    first_nonfinite_index: int
    min: float
    max: float
    mean: float

def scan(tensor: Any) -> ScanResult: ...
def tensor_stats(tensor: Any) -> TensorStats: ...
def check_numerics(tensor: _T, message: str, name: Optional[str] = ...) -> _T: ...
