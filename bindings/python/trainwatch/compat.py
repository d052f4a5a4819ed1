"""``tf.compat.v1``'s paths to the same names, for code that spells them so: ``tw.compat.v1.train.X`` is
``tw.train.X``, ``tw.compat.v1.estimator.X`` is ``tw.estimator.X`` and ``tw.compat.v1.summary`` is
``tw.summary``."""
import types

from . import estimator, summary, train

v1 = types.SimpleNamespace(train=train, estimator=estimator, summary=summary)
