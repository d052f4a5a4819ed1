# Type information for checkpoint.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
import os
from typing import Any, List, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]

class Saver:
    variables: dict
    max_to_keep: int
    keep_checkpoint_every_n_hours: float
    recycle_files: bool
    def __init__(self, variables: Mapping[str, Any], max_to_keep: int = ...,
                 keep_checkpoint_every_n_hours: float = ..., pad_step_number: bool = ...,
                 collective: Optional[Any] = ..., collective_timeout_secs: Optional[float] = ...,
                 is_chief: Optional[bool] = ..., recycle_files: bool = ...) -> None: ...
    def save(self, *args: Any, global_step: Optional[int] = ...) -> Optional[str]: ...
    def restore(self, *args: Any) -> None: ...
    def restore_newest_good(self, checkpoint_dir: _Path) -> str: ...
    def recover_last_checkpoints(self, checkpoint_dir: _Path) -> None: ...
    @property
    def last_checkpoints(self) -> List[str]: ...

DEFAULT_MAX_LOAD_BYTES: int

def latest_checkpoint(checkpoint_dir: _Path, latest_filename: Optional[str] = ...) -> Optional[str]: ...
def list_variables(ckpt_dir_or_file: _Path) -> List[Tuple[str, List[int]]]: ...
def load_variable(ckpt_dir_or_file: _Path, name: str, max_bytes: Optional[int] = ...) -> npt.NDArray[Any]: ...
