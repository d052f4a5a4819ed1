"""The library's log lines go to the ``logging`` logger "trainwatch" (levels share logging's numbers)."""
import atexit
import logging

from . import native

logger = logging.getLogger("trainwatch")


class _LoggingSink(native.LogSink):
    """Called by the library from any thread that logs (the GIL is taken for the call)."""

    def write(self, level, message):
        logger.log(level, message)


_sink = None


def route_library_logs():
    """Installs the sink (once). Background writers may still log while the interpreter shuts down:
    they are handed back to stderr first."""
    global _sink
    if _sink is None:
        _sink = _LoggingSink()
        native.set_log_sink(_sink)
        atexit.register(native.set_log_sink, None)
