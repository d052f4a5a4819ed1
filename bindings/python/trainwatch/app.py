"""TF1's ``tf.app.run()`` (``tf.compat.v1.app.run``): the last line of many TF1 training scripts
(``if __name__ == "__main__": tf.app.run()``), which calls the script's ``main(argv)`` and exits with
what it returns. Flags are the script's own (argparse, absl): nothing is parsed here."""
import sys

__all__ = ["run"]


def run(main=None, argv=None):
    """Calls ``main(argv)`` and exits the process with its return value, as TF's ``app.run``.

    Args:
      main: the function to run; default: the ``main`` of the ``__main__`` module.
      argv: its argument list; default: ``sys.argv``.

    Raises:
      SystemExit: always, with ``main``'s return value (None: status 0).
      AttributeError: ``main`` is None and the ``__main__`` module has no ``main``.
    """
    main = main or sys.modules["__main__"].main
    sys.exit(main(sys.argv if argv is None else argv))
