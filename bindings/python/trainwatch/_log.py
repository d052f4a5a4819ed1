"""The library's log lines go to the ``logging`` logger "trainwatch" (levels share logging's numbers)."""
import atexit
import logging

from . import native

logger = logging.getLogger("trainwatch")


class _LoggingSink(native.LogSink):
    """Called by the library from any thread that logs (the GIL is taken for the call)."""

    def write(self, level, message):
        logger.log(level, message)


_sink = _LoggingSink()
native.set_log_sink(_sink)
# Background writers may still log while the interpreter shuts down: hand them back to stderr first.
atexit.register(native.set_log_sink, None)
