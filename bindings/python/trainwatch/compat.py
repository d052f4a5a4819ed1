"""``tf.compat.v1``'s paths to the same names, for code that spells them so: ``tw.compat.v1.train.X`` is
``tw.train.X``, ``tw.compat.v1.estimator.X`` is ``tw.estimator.X``, ``tw.compat.v1.summary`` is
``tw.summary``; ``app``, ``logging``, ``gfile``, ``errors``, ``assign``, the event messages (``Summary``,
``Event``, ``SessionLog``, …) and the graph-only names (``get_default_graph``, ``device``,
``ConfigProto``) are the package's. ``trainwatch.compat.v1`` is a module too, so TF1 code written as
``import tensorflow.compat.v1 as tf`` ports as ``import trainwatch.compat.v1 as tf``."""
import sys
import types

from . import app, errors, estimator, gfile, summary, tf_logging, train
from .graph_only import ConfigProto, GPUOptions, device, get_default_graph
from .state_ops import assign
from .summary import Event, HistogramProto, LogMessage, SessionLog, Summary, SummaryMetadata, TensorProto

v1 = types.ModuleType(__name__ + ".v1", "tf.compat.v1's names that trainwatch has (see trainwatch.compat).")
v1.__dict__.update(train=train, estimator=estimator, summary=summary, app=app, logging=tf_logging, gfile=gfile,
                   errors=errors, assign=assign, get_default_graph=get_default_graph, device=device,
                   ConfigProto=ConfigProto, GPUOptions=GPUOptions, Summary=Summary, Event=Event,
                   SessionLog=SessionLog, HistogramProto=HistogramProto, LogMessage=LogMessage,
                   SummaryMetadata=SummaryMetadata, TensorProto=TensorProto)
sys.modules[v1.__name__] = v1  # `import trainwatch.compat.v1 as tf`
