# Type information for events.py (PEP 561); tests/core/check_python_stubs.py keeps the names in step.
import os
from typing import Dict, Iterator, NamedTuple, Optional, Tuple, Union

class Event(NamedTuple):
    wall_time: float
    step: int
    file_version: Optional[str]
    scalars: Dict[str, float]
    tags: Tuple[str, ...]
    session_log_status: int
    checkpoint_path: str
    message: str

def summary_iterator(path: Union[str, os.PathLike[str]]) -> Iterator[Event]: ...
