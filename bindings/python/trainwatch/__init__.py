"""trainwatch: TensorFlow 1's MonitoredTrainingSession and hooks for any training loop.

The names and signatures are tf.compat.v1.train's, so TF1 code ports by changing the import and turning
the graph into a step function::

    import numpy as np, trainwatch as tw

    params = {"w": np.zeros((64, 10), np.float32)}

    def train_step(ctx):                  # ctx: tw.StepContext
        loss = sgd_update(params, ctx.feeds["x"], ctx.feeds["y"])
        return {"loss": loss}             # published outputs; hooks fetch them by name

    hooks = [tw.NanTensorHook("loss"), tw.StopAtStepHook(last_step=1000)]
    with tw.MonitoredTrainingSession(checkpoint_dir="ckpt", hooks=hooks, variables=params) as sess:
        while not sess.should_stop():
            sess.run(train_step, feed_dict=next_batch())

Arrays cross into the library zero copy (numpy, torch tensors, anything with the buffer protocol or
__dlpack__; CUDA tensors and ``__cuda_array_interface__`` objects through ``trainwatch.devices``); results
come back as tf.Session.run returns them: numpy arrays, numpy scalars for 0-d values (a copy on the
device for a device tensor). Subclassing a built-in hook works as in TF (overrides calling super()), and ``session.run(name)``
reads a variable, an output of the run in progress or "global_step" (``tw.train.get_global_step()``
returns its handle). ``trainwatch.train`` and ``trainwatch.estimator`` hold the names TF exports there,
``trainwatch.compat.v1`` the same under TF's compat path. ``trainwatch.summary`` writes and reads
TensorBoard event files (tf.compat.v1.summary's ``FileWriter`` and ``summary_iterator``, with TF's
``Event`` and ``Summary`` messages). Log lines
go to the ``logging`` logger "trainwatch", as do a ported program's ``tw.logging`` lines; ``tw.gfile``
is TF1's file helpers on local paths, ``tw.assign(variable, value)`` TF's assign op as a step function,
and ``get_default_graph``, ``device``, ``ConfigProto`` are accepted so TF1 code runs (there is no graph).
"""
import sys

from . import _entry_points, devices, distributed, native
from ._log import route_library_logs
from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
                                      GlobalStepWaiterHook, LoggingTensorHook, NanTensorHook, ProfilerHook,
                                      SecondOrStepTimer, StepCounterHook, StopAtStepHook, SummarySaverHook)
from .checkpoint import Saver, latest_checkpoint, list_variables, load_variable
from .errors import (AbortedError, AlreadyExistsError, CallbackFailedError, CancelledError, DataLossError,
                     DeadlineExceededError, FailedPreconditionError, FeedConflictError, InternalError,
                     InvalidArgumentError, IOFailureError, NanLossDuringTrainingError, NotFoundError, OpError,
                     OutOfRangeError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
                     UnavailableError, UnimplementedError, UnknownError)
from .monitored_session import (USE_DEFAULT, ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession,
                                Scaffold, SingularMonitoredSession, WorkerSessionCreator)
from ._raw_session import RawSession
from .coordinator import Coordinator, LooperThread
from ._step import StepContext
from .numerics import ScanResult, TensorStats, check_numerics, scan, tensor_stats
from .shard import Shard
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from . import summary
from .summary import (Event, FileWriter, FileWriterCache, HistogramProto, LogMessage, SessionLog, Summary,
                      SummaryMetadata, TensorProto, summary_iterator)
from .tensors import bfloat16_to_float32
from .training_util import create_global_step, get_global_step, get_or_create_global_step
from .graph_only import ConfigProto, GPUOptions, device, get_default_graph
from .state_ops import assign
from . import app, gfile, tf_logging as logging
from . import compat, estimator, train

__version__ = native.version_string()

route_library_logs()

__all__ = [
    "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "StepContext",
    "MonitoredSession", "SingularMonitoredSession", "MonitoredTrainingSession", "ChiefSessionCreator",
    "WorkerSessionCreator", "Scaffold", "RawSession", "Coordinator", "LooperThread", "USE_DEFAULT",
    "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener", "NanTensorHook", "SecondOrStepTimer",
    "LoggingTensorHook", "StepCounterHook", "SummarySaverHook", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook",
    "ProfilerHook",
    "Saver", "Shard", "latest_checkpoint", "list_variables", "load_variable", "summary_iterator", "Event",
    "Summary", "SummaryMetadata", "SessionLog", "LogMessage", "HistogramProto", "TensorProto",
    "summary", "check_numerics", "scan", "tensor_stats", "ScanResult", "TensorStats",
    "bfloat16_to_float32", "train", "estimator", "compat",
    "get_global_step", "get_or_create_global_step", "create_global_step",
    "app", "gfile", "logging", "assign", "get_default_graph", "device", "ConfigProto", "GPUOptions",
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError", "NotFoundError",
    "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError", "FailedPreconditionError",
    "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError", "UnavailableError", "DataLossError",
    "UnauthenticatedError", "NanLossDuringTrainingError", "IOFailureError", "CallbackFailedError",
    "FeedConflictError",
]

# Errors point at the caller: tracebacks leaving these names stop at the package boundary.
_entry_points.expose(sys.modules[__name__], summary, train, estimator)
