"""TF1's ``tf.logging`` (``tf.compat.v1.logging``): a ported program's log lines go to the "trainwatch"
logger, with the hooks' own lines, as TF's both went to TF's logger; ``set_verbosity`` sets that
logger's level (``INFO`` shows the hooks' lines and the program's).

As TF's, the first use gives the logger a handler writing "LEVEL:trainwatch:message" lines to stderr
(to stdout, at INFO, in an interactive shell) unless the root logger has handlers already, so that a
script's ``tf.logging.set_verbosity(tf.logging.INFO)`` shows the hooks' lines as it did with TF."""
import logging as _logging
import sys as _sys

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("trainwatch")
_handler = None  # the handler the first use added, if it added one


def _get_logger():
    """The "trainwatch" logger, given TF's handler on first use (tf_logging.get_logger's rule)."""
    global _handler
    if _handler is None:
        _handler = False
        if not _logging.getLogger().handlers:  # a configured root logger already prints the lines
            interactive = hasattr(_sys, "ps1") or bool(_sys.flags.interactive)
            if interactive:
                _logger.setLevel(INFO)
            _handler = _logging.StreamHandler(_sys.stdout if interactive else _sys.stderr)
            _handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
            _logger.addHandler(_handler)
    return _logger

__all__ = ["DEBUG", "INFO", "WARN", "ERROR", "FATAL", "debug", "info", "warning", "warn", "error", "fatal", "log",
           "set_verbosity", "get_verbosity"]


def log(level, msg, *args, **kwargs):
    """Logs ``msg % args`` at ``level``.

    Args:
      level: ``DEBUG``, ``INFO``, ``WARN``, ``ERROR`` or ``FATAL`` (logging's numbers).
      msg: the message, with %-style placeholders for ``args``.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log`` (``exc_info``, …).
    """
    _get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    """Logs ``msg % args`` at DEBUG.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    """Logs ``msg % args`` at INFO.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    """Logs ``msg % args`` at WARN.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    """Logs ``msg % args`` at ERROR.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs ``msg % args`` at FATAL (the process goes on: TF's fatal only logs too).

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _get_logger().critical(msg, *args, **kwargs)


def set_verbosity(v):
    """Sets the "trainwatch" logger's level.

    Args:
      v: ``DEBUG``, ``INFO``, ``WARN``, ``ERROR`` or ``FATAL``.
    """
    _get_logger().setLevel(v)


def get_verbosity():
    """The "trainwatch" logger's effective level."""
    return _get_logger().getEffectiveLevel()
