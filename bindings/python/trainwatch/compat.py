"""``tf.compat.v1``'s paths to the same names, for code that spells them so: ``tw.compat.v1.train.X`` is
``tw.train.X`` and ``tw.compat.v1.summary`` is ``tw.summary``."""
import types

from . import summary, train

v1 = types.SimpleNamespace(train=train, summary=summary)
