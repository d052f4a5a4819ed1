"""TF's thread coordinator: ``tw.train.Coordinator`` and ``LooperThread`` on their own (W30), and the
Coordinator a session hands its hooks — a stop there stops the session, closing joins the registered
threads and raises what one reported (W12, W15, W16)."""
import logging
import sys
import threading
import time

import numpy as np
import pytest

import trainwatch as tw


def stop_after(coord, seconds):
    time.sleep(seconds)
    coord.request_stop()


def loop_until_stopped(coord, counter):
    while not coord.should_stop():
        counter.append(1)
        time.sleep(0.001)


def test_threads_share_one_stop_request_and_are_joined_W30():
    coord = tw.train.Coordinator()
    assert not coord.should_stop() and not coord.joined
    assert coord.wait_for_stop(0.01) is False
    counters = [[], []]
    threads = [threading.Thread(target=loop_until_stopped, args=(coord, c)) for c in counters]
    threads.append(threading.Thread(target=stop_after, args=(coord, 0.05)))
    for t in threads:
        t.start()
    coord.join(threads)
    assert coord.should_stop() and coord.wait_for_stop(0) is True and coord.joined
    assert not any(t.is_alive() for t in threads)
    assert all(counters)


def test_join_raises_the_first_reported_exception_with_its_traceback_W30():
    coord = tw.train.Coordinator()

    def fails():
        with coord.stop_on_exception():
            raise ValueError("first")

    def fails_later():
        coord.wait_for_stop()
        try:
            raise KeyError("second")
        except KeyError as error:
            coord.request_stop(error)

    threads = [threading.Thread(target=fails), threading.Thread(target=fails_later)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="first") as raised:
        coord.join(threads)
    assert any(frame.name == "fails" for frame in raised.traceback)  # the thread's own frame
    with pytest.raises(ValueError, match="first"):
        coord.raise_requested_exception()
    # Once joined, reporting an exception raises it at once.
    with pytest.raises(KeyError):
        try:
            raise KeyError("after join")
        except KeyError:
            coord.request_stop(sys.exc_info())


def test_clean_stop_exceptions_are_not_reported_W30():
    coord = tw.train.Coordinator()
    try:
        raise tw.OutOfRangeError("end of input")
    except tw.OutOfRangeError as error:
        coord.request_stop(error)
    assert coord.should_stop()
    coord.join()  # nothing to raise: the end of the input is a clean stop
    strict = tw.train.Coordinator(clean_stop_exception_types=[])
    try:
        raise tw.OutOfRangeError("end of input")
    except tw.OutOfRangeError as error:
        strict.request_stop(error)
    with pytest.raises(tw.OutOfRangeError):
        strict.join()


def test_an_exception_not_being_handled_is_a_value_error_W30():
    coord = tw.train.Coordinator()
    coord.request_stop(RuntimeError("never raised"))
    with pytest.raises(ValueError, match="ex must be a tuple or sys.exc_info must return the current exception"):
        coord.join()


def test_threads_alive_after_the_grace_period_W30(caplog):
    coord = tw.train.Coordinator()
    release = threading.Event()
    straggler = threading.Thread(target=release.wait, name="straggler")
    straggler.start()
    coord.request_stop()
    try:
        with pytest.raises(RuntimeError, match="^Coordinator stopped with threads still running: straggler$"):
            coord.join([straggler], stop_grace_period_secs=0.05)
        coord.clear_stop()
        assert not coord.should_stop() and not coord.joined
        coord.register_thread(straggler)
        coord.request_stop()
        with caplog.at_level(logging.INFO, logger="trainwatch"):
            coord.join(stop_grace_period_secs=0.05, ignore_live_threads=True)
        assert "Coordinator stopped with threads still running: straggler" in caplog.text
    finally:
        release.set()
        straggler.join()


def test_a_looper_thread_calls_its_target_until_the_stop_W30():
    coord = tw.train.Coordinator()
    calls = []
    looper = coord.loop(0.005, calls.append, args=("tick",))
    assert isinstance(looper, tw.train.LooperThread) and looper.daemon
    deadline = time.monotonic() + 10
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    coord.request_stop()
    coord.join()  # the looper registered itself
    assert not looper.is_alive()
    assert len(calls) >= 3 and set(calls) == {"tick"}


def test_a_looper_subclass_and_its_errors_W30():
    coord = tw.train.Coordinator()
    events = []

    class Counter(tw.train.LooperThread):
        def start_loop(self):
            events.append("start")

        def run_loop(self):
            events.append("run")
            if events.count("run") == 3:
                raise ArithmeticError("third round")

        def stop_loop(self):
            events.append("stop")  # not reached: the exception ends the loop

    Counter(coord, None).start()
    with pytest.raises(ArithmeticError, match="third round"):
        coord.join()
    assert events == ["start", "run", "run", "run"]
    with pytest.raises(ValueError, match="'coord' argument must be a Coordinator"):
        tw.train.LooperThread(object(), 1.0)
    with pytest.raises(ValueError, match="'args' and 'kwargs' argument require that you also pass 'target'"):
        tw.train.LooperThread(tw.train.Coordinator(), 1.0, args=(1,))


class FeederHook(tw.train.SessionRunHook):
    """A TF1 input hook: starts a thread in after_create_session, registered with the session's
    coordinator, that fills a queue until the coordinator stops."""

    def __init__(self, fail_after=None, stop_after=None):
        self._fail_after = fail_after
        self._stop_after = stop_after
        self.produced = 0
        self.ended = False

    def after_create_session(self, session, coord):
        self.coord = coord
        self.thread = threading.Thread(target=self._feed, name="feeder")
        coord.register_thread(self.thread)
        self.thread.start()

    def _feed(self):
        with self.coord.stop_on_exception():
            while not self.coord.should_stop():
                self.produced += 1
                if self.produced == self._fail_after:
                    raise IOError("input file vanished")
                if self.produced == self._stop_after:
                    self.coord.request_stop()
                time.sleep(0.001)

    def end(self, session):
        self.ended = True


def count_step(w):
    def step(ctx):
        w[0] += 1
    return step


def test_closing_a_session_stops_and_joins_its_hooks_threads_W15():
    w = np.zeros(1, np.float32)
    hook = FeederHook()
    with tw.train.MonitoredSession(tw.train.ChiefSessionCreator(tw.train.Scaffold(variables={"w": w})),
                                   hooks=[hook, tw.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(count_step(w))
        assert hook.thread.is_alive() and not hook.coord.should_stop()  # TF: threads run until close
    assert hook.ended and hook.coord.should_stop() and hook.coord.joined
    assert not hook.thread.is_alive() and hook.produced > 0


def test_a_threads_exception_is_raised_by_close_after_the_hooks_end_W12_W16():
    w = np.zeros(1, np.float32)
    hook = FeederHook(fail_after=3)
    with pytest.raises(IOError, match="input file vanished"):
        with tw.train.MonitoredTrainingSession(hooks=[hook], variables={"w": w}, log_step_count_steps=None,
                                               save_summaries_steps=None) as sess:
            while not sess.should_stop():  # the thread's stop stops the session
                sess.run(count_step(w))
    assert hook.ended and not hook.thread.is_alive()


def test_a_threads_stop_stops_the_session_W30():
    w = np.zeros(1, np.float32)
    hook = FeederHook(stop_after=5)
    with tw.train.SingularMonitoredSession(hooks=[hook],
                                           scaffold=tw.train.Scaffold(variables={"w": w})) as sess:
        deadline = time.monotonic() + 30
        while not sess.should_stop() and time.monotonic() < deadline:
            sess.run(count_step(w))
        assert sess.should_stop()
    assert hook.ended and hook.produced == 5


def test_a_thread_that_ignores_the_stop_is_left_after_the_grace_period_W15(caplog):
    release = threading.Event()

    class Stubborn(tw.train.SessionRunHook):
        def after_create_session(self, session, coord):
            self.thread = threading.Thread(target=release.wait, name="stubborn")
            coord.register_thread(self.thread)
            self.thread.start()

    hook = Stubborn()
    try:
        with caplog.at_level(logging.INFO, logger="trainwatch"):
            with tw.train.MonitoredSession(hooks=[hook], stop_grace_period_secs=0.05) as sess:
                sess.run(lambda ctx: None)
        assert "Coordinator stopped with threads still running: stubborn" in caplog.text
        assert hook.thread.is_alive()
    finally:
        release.set()
        hook.thread.join()


def test_a_singular_sessions_stop_check_raises_what_a_thread_reported_W13():
    w = np.zeros(1, np.float32)
    hook = FeederHook(fail_after=2)
    with pytest.raises(IOError, match="input file vanished"):
        with tw.train.SingularMonitoredSession(hooks=[hook], scaffold=tw.train.Scaffold(variables={"w": w})) as sess:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if sess.should_stop():  # raises once the thread has reported
                    break
                sess.run(count_step(w))
    assert not hook.ended  # an exception out of the block skips end() (H16)
    assert not hook.thread.is_alive()


def test_threads_are_joined_even_when_a_hooks_end_raises_W15():
    class EndFails(FeederHook):
        def end(self, session):
            raise KeyError("end failed")

    hook = EndFails()
    with pytest.raises(KeyError, match="end failed"):
        with tw.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(lambda ctx: None)
    assert hook.coord.should_stop() and not hook.thread.is_alive()
