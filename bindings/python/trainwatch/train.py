"""The ``tf.train`` / ``tf.compat.v1.train`` namespace: TF1 code that spells ``tf.train.X`` ports as
``tw.train.X``. Every name here is also at the package's top level."""
import os

from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
                                      GlobalStepWaiterHook, LoggingTensorHook, NanTensorHook, ProfilerHook,
                                      SecondOrStepTimer, StepCounterHook, StopAtStepHook, SummarySaverHook)
from .checkpoint import Saver, latest_checkpoint, list_variables, load_variable
from .errors import NanLossDuringTrainingError
from .monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, Scaffold,
                                SingularMonitoredSession, WorkerSessionCreator)
from .coordinator import Coordinator, LooperThread
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from .summary import summary_iterator
from .training_util import create_global_step, get_global_step, get_or_create_global_step, global_step

__all__ = [
    "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "MonitoredSession",
    "SingularMonitoredSession", "MonitoredTrainingSession", "ChiefSessionCreator", "WorkerSessionCreator",
    "Scaffold", "Coordinator", "LooperThread", "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener",
    "NanTensorHook", "SecondOrStepTimer", "LoggingTensorHook", "StepCounterHook", "SummarySaverHook",
    "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "ProfilerHook", "Saver", "latest_checkpoint",
    "list_variables", "load_variable", "summary_iterator", "write_graph", "NanLossDuringTrainingError",
    "get_global_step", "get_or_create_global_step", "create_global_step", "global_step",
]


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Accepted so TF code runs, as ``tf.io.write_graph``: there is no graph, and nothing is written.

    Args:
      graph_or_graph_def: ignored.
      logdir: the directory TF would write to.
      name: the file name TF would write.
      as_text: ignored.

    Returns:
      The path TF would have written, ``os.path.join(logdir, name)`` (no file is created there).
    """
    del graph_or_graph_def, as_text
    return os.path.join(os.fspath(logdir), os.fspath(name))
