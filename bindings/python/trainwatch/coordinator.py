"""TF's thread coordinator (``tf.train.Coordinator``) and ``LooperThread``: threads that feed or watch a
training loop share one stop request, report the exception that stopped them, and are joined.

A session hands its hooks' ``after_create_session`` a Coordinator of its own: a stop requested there
stops the session (``should_stop()`` turns True), and closing the session joins the threads registered
with it and raises the exception one of them reported, as TF's MonitoredSession does.
"""
import contextlib
import sys
import threading
import time

from ._log import logger
from .errors import OutOfRangeError


class Coordinator:
    """Coordinates the termination of a set of threads.

    Threads loop ``while not coord.should_stop()``; any of them may call ``request_stop()`` (with the
    exception that stopped it, for ``join()`` to raise); the main thread ``join()``s them.
    """

    def __init__(self, clean_stop_exception_types=None):
        """Creates a coordinator.

        Args:
          clean_stop_exception_types: exception types that stop the threads without being reported
            (``request_stop(ex)`` with one of them is a plain stop). Default: ``(OutOfRangeError,)``.
        """
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()
        self._on_stop = None  # a session's: also stops the session (see module docstring)

    def _filter_exception(self, ex):
        value = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(value, self._clean_stop_exception_types) else ex

    def request_stop(self, ex=None):
        """Requests that the threads stop; ``should_stop()`` returns True from now on.

        Args:
          ex: the exception that stopped the caller — an exception being handled, or a
            ``sys.exc_info()`` tuple. The first one reported is raised by ``join()``; one of the
            clean-stop types is not reported.

        Raises:
          ValueError: ``ex`` is an exception that is not being handled (no traceback to report).
          Exception: ``ex`` itself, when the coordinator was already joined.
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    raise ex[1].with_traceback(ex[2])
                if ex is not None:
                    raise ex
            if not self._stop_event.is_set():
                if ex and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        logger.info("Error reported to Coordinator: %s", ex[1], exc_info=ex)
                        exc_info = ex
                    else:
                        logger.info("Error reported to Coordinator: %s, %s", type(ex), ex)
                        exc_info = sys.exc_info()
                    if len(exc_info) != 3 or not exc_info[0] or not exc_info[1]:
                        try:
                            raise ValueError("ex must be a tuple or sys.exc_info must return the current "
                                             f"exception: {exc_info}")
                        except ValueError:
                            exc_info = sys.exc_info()
                    self._exc_info_to_raise = exc_info
                self._stop_event.set()
        if self._on_stop is not None:
            self._on_stop()

    def clear_stop(self):
        """Clears the stop request and the reported exception, so the threads may be started again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        """Whether a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context in which any exception requests a stop, reporting it (and is not propagated)."""
        try:
            yield
        except:  # noqa: E722 -- TF's: every exception, SystemExit included, stops the threads
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits until a stop is requested.

        Args:
          timeout: seconds to wait at most; None waits for ever.

        Returns:
          True if a stop was requested, False if the timeout expired first.
        """
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        """Registers a thread for ``join()`` to wait for.

        Args:
          thread: a ``threading.Thread``.
        """
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits until the threads end or a stop is requested, then gives live threads a grace period.

        Args:
          threads: threads to wait for, besides the registered ones.
          stop_grace_period_secs: seconds the threads get to end once a stop was requested.
          ignore_live_threads: log threads still alive after the grace period instead of raising.

        Raises:
          Exception: the exception reported with ``request_stop(ex)``, with its traceback.
          RuntimeError: threads are still alive after the grace period, without
            ``ignore_live_threads``.
        """
        with self._lock:
            threads = set(threads or ()).union(self._registered_threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        wait_secs = 0.001
        while any(t.is_alive() for t in threads) and stop_grace_period_secs >= 0.0:
            time.sleep(wait_secs)
            stop_grace_period_secs -= wait_secs
            wait_secs = max(min(2 * wait_secs, stop_grace_period_secs), 0.001)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, value, traceback = self._exc_info_to_raise
                raise value.with_traceback(traceback)
            if stragglers:
                message = "Coordinator stopped with threads still running: " + " ".join(stragglers)
                if not ignore_live_threads:
                    raise RuntimeError(message)
                logger.info("%s", message)

    @property
    def joined(self):
        """Whether ``join()`` has returned (or raised) since the last ``clear_stop()``."""
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception reported with ``request_stop(ex)``, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                _, value, traceback = self._exc_info_to_raise
                raise value.with_traceback(traceback)

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a ``LooperThread`` calling ``target(*args, **kwargs)`` every ``timer_interval_secs``.

        Args:
          timer_interval_secs: seconds between calls; None calls again as soon as one returns.
          target: the callable.
          args: its positional arguments.
          kwargs: its keyword arguments.

        Returns:
          The started thread (registered with this coordinator).
        """
        return LooperThread.loop(self, timer_interval_secs, target, args, kwargs)


class LooperThread(threading.Thread):
    """A daemon thread that calls ``run_loop()`` (or ``target``) until its coordinator stops, every
    ``timer_interval_secs`` or back to back; an exception it raises is reported to the coordinator."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        """Creates the thread and registers it with ``coord`` (start it with ``start()``).

        Args:
          coord: the Coordinator.
          timer_interval_secs: seconds between calls; None calls again as soon as one returns.
          target: called by ``run_loop()``; subclasses override ``run_loop()`` instead.
          args: ``target``'s positional arguments.
          kwargs: ``target``'s keyword arguments.

        Raises:
          ValueError: ``coord`` is not a Coordinator, or ``args``/``kwargs`` come without ``target``.
        """
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Creates and starts a LooperThread.

        Args:
          coord: the Coordinator it registers with.
          timer_interval_secs: seconds between calls; None calls again as soon as one returns.
          target: the callable.
          args: its positional arguments.
          kwargs: its keyword arguments.

        Returns:
          The started thread.
        """
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_call = time.time()
                while not self._coord.wait_for_stop(next_call - time.time()):
                    next_call += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once, first, on the thread."""

    def stop_loop(self):
        """Called once, last, on the thread (not after an exception)."""

    def run_loop(self):
        """Called on every round; calls ``target`` unless overridden."""
        if self._target:
            self._target(*self._args, **self._kwargs)
