"""TF1's ``tf.logging`` (``tf.compat.v1.logging``): a ported program's log lines go to the "trainwatch"
logger, with the hooks' own lines, as TF's both went to TF's logger; ``set_verbosity`` sets that
logger's level (``INFO`` shows the hooks' lines and the program's)."""
import logging as _logging

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("trainwatch")

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
    _logger.log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    """Logs ``msg % args`` at DEBUG.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    """Logs ``msg % args`` at INFO.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    """Logs ``msg % args`` at WARN.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    """Logs ``msg % args`` at ERROR.

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _logger.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs ``msg % args`` at FATAL (the process goes on: TF's fatal only logs too).

    Args:
      msg: the message.
      *args: the placeholders' values.
      **kwargs: passed on to ``logging.Logger.log``.
    """
    _logger.critical(msg, *args, **kwargs)


def set_verbosity(v):
    """Sets the "trainwatch" logger's level.

    Args:
      v: ``DEBUG``, ``INFO``, ``WARN``, ``ERROR`` or ``FATAL``.
    """
    _logger.setLevel(v)


def get_verbosity():
    """The "trainwatch" logger's effective level."""
    return _logger.getEffectiveLevel()
