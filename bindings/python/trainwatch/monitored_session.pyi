# Type information for monitored_session.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
import os
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple, Type, TypeVar, Union, overload

from .checkpoint import Saver
from .distributed import Collective
from ._raw_session import RawSession
from .coordinator import Coordinator
from ._step import StepContext
from .session_run_hook import FetchedValues, Fetches, SessionRunHook

_Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]
_T = TypeVar("_T")
_Self = TypeVar("_Self", bound="_MonitoredSession")
# A step function receives the step context and returns a dict of outputs (name → array) or None.
_StepFn = Callable[[StepContext], _T]

class Scaffold:
    init_fn: Optional[Callable[["Scaffold", RawSession], None]]
    variables: Dict[str, Any]
    def __init__(self, init_fn: Optional[Callable[["Scaffold", RawSession], None]] = ...,
                 variables: Optional[Mapping[str, Any]] = ..., saver: Optional[Saver] = ...) -> None: ...
    @property
    def saver(self) -> Optional[Saver]: ...
    @saver.setter
    def saver(self, value: Optional[Saver]) -> None: ...
    def finalize(self) -> "Scaffold": ...

class _SessionCreator:
    scaffold: Scaffold
    retention: Optional[Tuple[int, float]]

class ChiefSessionCreator(_SessionCreator):
    checkpoint_dir: Optional[_Path]
    checkpoint_filename_with_path: Optional[_Path]
    def __init__(self, scaffold: Optional[Scaffold] = ..., master: str = ..., config: Any = ...,
                 checkpoint_dir: Optional[_Path] = ..., checkpoint_filename_with_path: Optional[_Path] = ...) -> None: ...

class WorkerSessionCreator(_SessionCreator):
    max_wait_secs: Optional[float]
    def __init__(self, scaffold: Optional[Scaffold] = ..., master: str = ..., config: Any = ...,
                 max_wait_secs: Optional[float] = ...) -> None: ...

class _MonitoredSession:
    @overload
    def run(self, fetches: _StepFn[_T], feed_dict: Optional[Mapping[str, Any]] = ...) -> _T: ...
    @overload
    def run(self, fetches: Fetches, feed_dict: Optional[Mapping[str, Any]] = ...) -> FetchedValues: ...
    def run_step_fn(self, step_fn: _StepFn[_T]) -> _T: ...
    def run_without_hooks(self, step_fn: _StepFn[_T], feed_dict: Optional[Mapping[str, Any]] = ...) -> _T: ...
    def should_stop(self) -> bool: ...
    def request_stop(self) -> None: ...
    def close(self) -> None: ...
    @property
    def global_step(self) -> int: ...
    @property
    def preempted(self) -> bool: ...
    def notify_preemption(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, exception_type: Optional[Type[BaseException]], exception_value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> bool: ...
    def raw_session(self, session_ref: Any = ...) -> RawSession: ...
    def coordinator(self) -> Coordinator: ...

class MonitoredSession(_MonitoredSession):
    def __init__(self, session_creator: Optional[_SessionCreator] = ...,
                 hooks: Optional[Iterable[SessionRunHook]] = ..., stop_grace_period_secs: float = ...,
                 collective: Optional[Collective] = ..., collective_timeout_secs: Optional[float] = ...,
                 vote_every_n_runs: int = ..., restore_via_broadcast: bool = ...,
                 catch_preemption_signals: bool = ...) -> None: ...

class SingularMonitoredSession(_MonitoredSession):
    def __init__(self, hooks: Optional[Iterable[SessionRunHook]] = ..., scaffold: Optional[Scaffold] = ...,
                 master: str = ..., config: Any = ..., checkpoint_dir: Optional[_Path] = ...,
                 stop_grace_period_secs: float = ..., checkpoint_filename_with_path: Optional[_Path] = ...) -> None: ...
    def should_stop(self) -> bool: ...
    def raw_session(self, session_ref: Any = ...) -> Optional[RawSession]: ...

class _UseDefault: ...

USE_DEFAULT: _UseDefault

class MonitoredTrainingSession(MonitoredSession):
    def __init__(self, master: str = ..., is_chief: Union[bool, _UseDefault] = ..., checkpoint_dir: Optional[_Path] = ...,
                 scaffold: Optional[Scaffold] = ..., hooks: Optional[Iterable[SessionRunHook]] = ...,
                 chief_only_hooks: Optional[Iterable[SessionRunHook]] = ...,
                 save_checkpoint_secs: Union[float, None, _UseDefault] = ...,
                 save_summaries_steps: Union[int, None, _UseDefault] = ...,
                 save_summaries_secs: Union[float, None, _UseDefault] = ..., config: Any = ...,
                 stop_grace_period_secs: float = ..., log_step_count_steps: Optional[int] = ...,
                 max_wait_secs: Optional[float] = ..., save_checkpoint_steps: Union[int, None, _UseDefault] = ...,
                 summary_dir: Optional[_Path] = ..., save_graph_def: bool = ...,
                 variables: Optional[Mapping[str, Any]] = ..., max_to_keep: int = ...,
                 keep_checkpoint_every_n_hours: float = ..., collective: Optional[Collective] = ...,
                 collective_timeout_secs: Optional[float] = ..., vote_every_n_runs: int = ...,
                 restore_via_broadcast: bool = ..., catch_preemption_signals: bool = ...,
                 recycle_checkpoint_files: bool = ...,
                 summary_histograms: Union[str, Iterable[str], None] = ...) -> None: ...
