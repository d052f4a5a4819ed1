"""``tf.compat.v1``'s paths to the same names, for code that spells them so: ``tw.compat.v1.train.X`` is
``tw.train.X``, ``tw.compat.v1.estimator.X`` is ``tw.estimator.X``, ``tw.compat.v1.summary`` is
``tw.summary``; ``app``, ``logging``, ``gfile``, ``errors``, ``assign``, ``Summary`` and the graph-only
names (``get_default_graph``, ``device``, ``ConfigProto``) are the package's."""
import types

from . import app, errors, estimator, gfile, summary, tf_logging, train
from .graph_only import ConfigProto, GPUOptions, device, get_default_graph
from .state_ops import assign
from .summary import Summary

v1 = types.SimpleNamespace(train=train, estimator=estimator, summary=summary, app=app, logging=tf_logging,
                           gfile=gfile, errors=errors, assign=assign, Summary=Summary,
                           get_default_graph=get_default_graph, device=device, ConfigProto=ConfigProto,
                           GPUOptions=GPUOptions)
