# Type information for app.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
from typing import Callable, List, NoReturn, Optional

def run(main: Optional[Callable[[List[str]], object]] = ..., argv: Optional[List[str]] = ...) -> NoReturn: ...
