"""One rank of the data-parallel framework's pattern in test_tf1_real_programs.py, run as its own process
by distributed_world.run_gloo (usage as distributed_ranks.py).

A broadcast-variables hook as a data-parallel framework writes it (Horovod's BroadcastGlobalVariablesHook,
horovod/tensorflow/__init__.py): the module defines the hook only when TF has a default graph, its
``begin`` builds the broadcast op under ``tf.device(self.device)`` and rebuilds it when the op's graph is
not the default one, and ``after_create_session`` runs it. The hook code below calls exactly those TF
names on ``tf = trainwatch``; the framework's graph function, ``broadcast_global_variables(root_rank)``,
becomes a step function that broadcasts every registered variable through the job's collective.
"""
import sys

import numpy as np

import trainwatch as tf
from distributed_ranks import TIMEOUT_SECS, main

_collective = None


def broadcast_global_variables(root_rank):
    """The framework's graph function, ported: an op (a step function) that copies rank ``root_rank``'s
    registered variables into every rank's."""
    def broadcast_op(ctx):
        for _, array in sorted(ctx.session.variables.items()):
            _collective.broadcast(array.reshape(-1).view(np.uint8), root_rank, TIMEOUT_SECS)
    broadcast_op.graph = None  # the op's graph: the default one, which is None
    return broadcast_op


# The framework's module guards: without a default graph (or a hook base) it defines no hook at all.
try:
    _get_default_graph = tf.compat.v1.get_default_graph
except AttributeError:
    _get_default_graph = None
_SessionRunHook = getattr(tf.estimator, "SessionRunHook", None)

if _SessionRunHook is not None and _get_default_graph is not None:
    class BroadcastVariablesHook(_SessionRunHook):
        def __init__(self, root_rank, device=""):
            super().__init__()
            self.root_rank = root_rank
            self.bcast_op = None
            self.device = device

        def begin(self):
            stale = self.bcast_op is None or self.bcast_op.graph != _get_default_graph()
            if stale:  # a new graph: build the op again, on the hook's device
                with tf.device(self.device):
                    self.bcast_op = broadcast_global_variables(self.root_rank)

        def after_create_session(self, session, coord):
            session.run(self.bcast_op)


def scenario_broadcast_hook(collective, rank, workdir, report):
    global _collective
    _collective = collective
    weights = np.random.default_rng(rank).standard_normal(4).astype(np.float32)  # each rank's own init
    bias = np.full(3, rank, np.int64)
    seen = {}

    class Record(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            seen.update(w=session.run("w").tolist(), b=session.run("b").tolist(),
                        step=int(session.run(tf.train.get_global_step())))

    hook = BroadcastVariablesHook(0)
    for _ in range(2):  # the same hook in a second session: begin() keeps its op (same default graph)
        with tf.train.MonitoredTrainingSession(collective=collective, hooks=[hook, Record()],
                                               collective_timeout_secs=TIMEOUT_SECS,
                                               scaffold=tf.train.Scaffold(variables={"w": weights, "b": bias})) as sess:
            for _ in range(3):
                sess.run(lambda ctx: None)
        report["steps"].append(sess.global_step)
    report["seen"] = seen
    report["rank0_init"] = np.random.default_rng(0).standard_normal(4).astype(np.float32).tolist()


if __name__ == "__main__":
    main(sys.argv[1:], globals())
