"""Names of TF1's graph and runtime that TF1 code calls around its hooks, accepted so it runs: there
is no graph and no TF runtime to configure. ``get_default_graph()`` returns None, what stands for
a graph everywhere in trainwatch (``FileWriter(logdir, graph)``, ``add_graph``); ``device(name)`` places
nothing; ``ConfigProto``/``GPUOptions`` hold the fields they are given for ``config=``, which sessions
accept and ignore."""
# B51: graph-only calls are accepted and do nothing.
import contextlib

__all__ = ["get_default_graph", "device", "ConfigProto", "GPUOptions"]


def get_default_graph():
    """Returns None: there is no graph (TF code only compares it or passes it on)."""
    return None


def device(device_name_or_function):
    """TF's ``with tf.device(name):`` — a context manager that places nothing (a step function puts
    its values where it computes them).

    Args:
      device_name_or_function: accepted for TF code.
    """
    del device_name_or_function
    return contextlib.nullcontext()


class GPUOptions:
    """TF's ``GPUOptions(allow_growth=…, …)``: holds the fields it is given; nothing reads them."""

    def __init__(self, **fields):
        """Keeps ``fields`` as attributes.

        Args:
          **fields: TF's GPUOptions fields (``allow_growth``, ``per_process_gpu_memory_fraction``, …).
        """
        self.__dict__.update(fields)


class ConfigProto:
    """TF's session ``ConfigProto(log_device_placement=…, …)``, for ``config=``: holds the fields it is
    given (``gpu_options`` too, so ``config.gpu_options.allow_growth = True`` works); sessions accept
    it and ignore it."""

    def __init__(self, **fields):
        """Keeps ``fields`` as attributes.

        Args:
          **fields: TF's ConfigProto fields (``log_device_placement``, ``allow_soft_placement``,
            ``gpu_options``, …).
        """
        self.gpu_options = GPUOptions()
        self.__dict__.update(fields)
