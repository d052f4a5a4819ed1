# Type information for train.py (PEP 561); tests/repo/check_python_stubs.py keeps the names in step.
import os
from typing import Any, Union

from .basic_session_run_hooks import (CheckpointSaverHook as CheckpointSaverHook,
                                      CheckpointSaverListener as CheckpointSaverListener, FeedFnHook as FeedFnHook,
                                      FinalOpsHook as FinalOpsHook, GlobalStepWaiterHook as GlobalStepWaiterHook,
                                      LoggingTensorHook as LoggingTensorHook, NanTensorHook as NanTensorHook,
                                      ProfilerHook as ProfilerHook, SecondOrStepTimer as SecondOrStepTimer,
                                      StepCounterHook as StepCounterHook, StopAtStepHook as StopAtStepHook,
                                      SummarySaverHook as SummarySaverHook)
from .checkpoint import (Saver as Saver, latest_checkpoint as latest_checkpoint, list_variables as list_variables,
                         load_variable as load_variable)
from .monitored_session import (ChiefSessionCreator as ChiefSessionCreator, MonitoredSession as MonitoredSession,
                                MonitoredTrainingSession as MonitoredTrainingSession, Scaffold as Scaffold,
                                SingularMonitoredSession as SingularMonitoredSession,
                                WorkerSessionCreator as WorkerSessionCreator)
from .coordinator import Coordinator as Coordinator, LooperThread as LooperThread
from .session_run_hook import (SessionRunArgs as SessionRunArgs, SessionRunContext as SessionRunContext,
                               SessionRunHook as SessionRunHook, SessionRunValues as SessionRunValues)
from .errors import NanLossDuringTrainingError as NanLossDuringTrainingError
from .summary import summary_iterator as summary_iterator
from .training_util import (create_global_step as create_global_step, get_global_step as get_global_step,
                            get_or_create_global_step as get_or_create_global_step, global_step as global_step)

def write_graph(graph_or_graph_def: Any, logdir: Union[str, os.PathLike[str]], name: Union[str, os.PathLike[str]],
                as_text: bool = ...) -> str: ...
