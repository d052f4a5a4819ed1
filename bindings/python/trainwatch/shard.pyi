# Type information for shard.py (PEP 561); tests/core/check_python_stubs.py keeps the names in step.
from typing import Any, Dict, Mapping, Sequence, Tuple, Union

class Shard:
    tensor: Any
    global_shape: Tuple[int, ...]
    offset: Tuple[int, ...]
    def __init__(self, tensor: Any, global_shape: Sequence[int], offset: Union[int, Sequence[int]] = ...) -> None: ...

def arrays(variables: Mapping[str, Any]) -> Dict[str, Any]: ...
def register(variables: Mapping[str, Any], options: Any = ...) -> Any: ...
