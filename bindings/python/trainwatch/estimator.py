"""The hook names TF also exports as ``tf.estimator.X`` (model-zoo hooks subclass
``tf.estimator.LoggingTensorHook`` and return ``tf.estimator.SessionRunArgs``): the same classes as
``trainwatch.train``'s. Estimators themselves are not part of trainwatch."""
from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
                                      GlobalStepWaiterHook, LoggingTensorHook, NanTensorHook, ProfilerHook,
                                      SecondOrStepTimer, StepCounterHook, StopAtStepHook, SummarySaverHook)
from .errors import NanLossDuringTrainingError
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

__all__ = [
    "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "CheckpointSaverHook",
    "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook",
    "NanTensorHook", "ProfilerHook", "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook", "SummarySaverHook",
    "NanLossDuringTrainingError",
]
