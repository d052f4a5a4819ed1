"""tf.train's names, for code that reaches them as ``tf.train.X`` (``tw.train.X`` after the port):
the sessions, hooks and their values, the global-step functions, Saver and the checkpoint helpers.
Every name here is also at the package top level."""
from ._raw_session import Coordinator
from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
                                      GlobalStepWaiterHook, LoggingTensorHook, NanTensorHook, ProfilerHook,
                                      SecondOrStepTimer, StepCounterHook, StopAtStepHook, SummarySaverHook)
from .checkpoint import Saver, latest_checkpoint, list_variables, load_variable
from .errors import NanLossDuringTrainingError
from .monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, Scaffold,
                                SingularMonitoredSession, WorkerSessionCreator)
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from .summary import summary_iterator
from .training_util import create_global_step, get_global_step, get_or_create_global_step, global_step

__all__ = [
    "MonitoredTrainingSession", "MonitoredSession", "SingularMonitoredSession", "ChiefSessionCreator",
    "WorkerSessionCreator", "Scaffold", "Coordinator",
    "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
    "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener", "NanTensorHook", "SecondOrStepTimer",
    "LoggingTensorHook", "StepCounterHook", "SummarySaverHook", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook",
    "ProfilerHook", "NanLossDuringTrainingError",
    "Saver", "latest_checkpoint", "list_variables", "load_variable", "summary_iterator",
    "get_global_step", "get_or_create_global_step", "create_global_step", "global_step",
]
