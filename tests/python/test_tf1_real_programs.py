"""Real TF1 programs and hook libraries, ported as docs/porting-from-tf1.md prescribes: ``tf`` is trainwatch
(``import trainwatch as tf``), the graph becomes a step function, and the hook code calls what the
libraries' hooks call — the same TF names, attributes and fetch shapes. Each test follows one program
(named with its repository and file), runs it in a real MonitoredTrainingSession and checks what the
hook does: the steps it logs on, the step it stops at, the values it reads back, the checkpoints.

The programs: the CIFAR-10 tutorial's training loop and logger hook; the model zoo's examples-per-second
hook and LoggingTensorHook subclass; a data-parallel framework's broadcast-variables hook on two ranks;
a research library's metric-based early-stopping and plateau hooks; the Estimator package's early-stopping
hooks; a small trainer library's stop/log/checkpoint hooks; a MonitoredTrainingSession loop interrupted
with Ctrl-C and run again."""
import collections
import logging
import os
import signal
import sys
import time
import types
from datetime import datetime

import numpy as np
import pytest

import trainwatch as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def trainwatch_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "trainwatch"]


# --- the CIFAR-10 tutorial (tensorflow/models tutorials/image/cifar10/cifar10_train.py) ------------------

def test_the_cifar10_tutorial_loop_with_its_logger_hook_runs_as_written_B51(tmp_path, capsys):
    """tf.app.run() calls main(), which clears the train_dir with tf.gfile; train() passes
    config=tf.ConfigProto(...) and a logger hook that counts its own steps and prints the loss it fetched
    every log_frequency runs."""
    flags = types.SimpleNamespace(train_dir=str(tmp_path / "cifar10_train"), max_steps=25, log_frequency=10,
                                  batch_size=128, log_device_placement=False)
    os.makedirs(flags.train_dir)
    open(os.path.join(flags.train_dir, "stale"), "w").close()

    def train():
        global_step = tf.train.get_or_create_global_step()
        loss = "loss"

        def train_op(ctx):  # the graph → step edit
            return {"loss": np.float32(2.3 / (1 + ctx.global_step))}

        class _LoggerHook(tf.train.SessionRunHook):  # counts its own runs, prints every log_frequency
            def begin(self):
                self._step, self._last_time = -1, time.time()

            def before_run(self, run_context):
                self._step += 1
                return tf.train.SessionRunArgs(loss)

            def after_run(self, run_context, run_values):
                if self._step % flags.log_frequency:
                    return
                now = time.time()
                rate = flags.log_frequency * flags.batch_size / max(now - self._last_time, 1e-9)
                self._last_time = now
                print(f"{datetime.now()}: step {self._step}, loss = {run_values.results:.2f} ({rate:.1f} examples/sec)")

        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=flags.train_dir,
                hooks=[tf.train.StopAtStepHook(last_step=flags.max_steps), tf.train.NanTensorHook(loss), _LoggerHook()],
                config=tf.ConfigProto(log_device_placement=flags.log_device_placement)) as mon_sess:
            while not mon_sess.should_stop():
                mon_sess.run(train_op)
        return global_step, mon_sess

    ran = []

    def main(argv=None):
        if tf.gfile.Exists(flags.train_dir):
            tf.gfile.DeleteRecursively(flags.train_dir)
        tf.gfile.MakeDirs(flags.train_dir)
        ran.append(train())

    with pytest.raises(SystemExit) as exit_status:
        tf.app.run(main=main, argv=["cifar10_train.py"])  # the script's last line
    assert exit_status.value.code is None
    ((global_step, sess),) = ran

    printed = [line.split(": ", 1)[1].split(" (")[0] for line in capsys.readouterr().out.splitlines()]
    assert printed == ["step 0, loss = 2.30", "step 10, loss = 0.21", "step 20, loss = 0.11"]
    assert sess.global_step == 25 and global_step.name == "global_step"
    assert tf.train.latest_checkpoint(flags.train_dir).endswith("model.ckpt-25")  # the final save (C-rules)
    assert not os.path.exists(os.path.join(flags.train_dir, "stale"))


# --- the model zoo (tensorflow/models official/utils/logs/hooks.py and metric_hook.py) -------------------

class BenchmarkLogger:
    """What the zoo's hooks write to (its BenchmarkLogger): (metric, value, global step) rows."""

    def __init__(self):
        self.rows = []

    def log_metric(self, name, value, unit=None, global_step=None, extras=None):
        self.rows.append((name, float(value), int(global_step)))


class Throughput(tf.estimator.SessionRunHook):
    """The zoo's examples-per-second hook: TF's timer over the global step it fetches, after a warm-up;
    the first trigger only starts the clock."""

    def __init__(self, batch_size, every_n_steps, warm_steps, metric_logger):
        self._timer = tf.estimator.SecondOrStepTimer(every_steps=every_n_steps)
        self._batch_size, self._warm_steps, self._logger = batch_size, warm_steps, metric_logger
        self.rates = []

    def begin(self):
        self._global_step_tensor = tf.compat.v1.train.get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("a global step is needed")

    def before_run(self, run_context):
        return tf.estimator.SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = run_values.results
        if step <= self._warm_steps or not self._timer.should_trigger_for_step(step):
            return
        seconds, steps = self._timer.update_last_triggered_step(step)
        if seconds is not None:
            self.rates.append(self._batch_size * steps / max(seconds, 1e-9))
            self._logger.log_metric("examples_per_sec", self.rates[-1], global_step=step)


class MetricLogging(tf.estimator.LoggingTensorHook):
    """The zoo's LoggingTensorHook subclass: it adds the global step to TF's _current_tensors, logs on
    the runs the built-in's _should_trigger marks, and at the end evaluates _current_tensors once more."""

    def __init__(self, tensors, metric_logger, every_n_iter=None, at_end=False):
        super().__init__(tensors, every_n_iter=every_n_iter, at_end=at_end)
        self._logger = metric_logger

    def begin(self):
        super().begin()
        self._global_step_tensor = tf.compat.v1.train.get_global_step()
        self._current_tensors.setdefault(self._global_step_tensor.name, self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._write(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._write(session.run(self._current_tensors))

    def _write(self, values):
        self._timer.update_last_triggered_step(self._iter_count)
        step = values[self._global_step_tensor.name]
        for tag in self._tag_order:
            self._logger.log_metric(tag, values[tag], global_step=step)


def zoo_step(ctx):
    return {"loss": np.float32(1.0 / (1 + ctx.global_step)), "lr": np.float32(0.5)}


def test_the_model_zoo_hooks_log_on_their_timers_and_at_end_B10_H33():
    """end()'s session.run(self._current_tensors) reads the outputs of the last run (a step cannot run
    again, B10) and the global step as it is now, as TF's extra evaluation did."""
    metrics, rates = BenchmarkLogger(), BenchmarkLogger()
    hooks = [Throughput(32, every_n_steps=2, warm_steps=2, metric_logger=rates),
             MetricLogging({"loss": "loss", "lr": "lr"}, metrics, every_n_iter=3, at_end=True),
             tf.train.StopAtStepHook(last_step=7)]
    with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(zoo_step)
    assert metrics.rows == [("loss", 1.0, 0), ("lr", 0.5, 0), ("loss", 0.25, 3), ("lr", 0.5, 3),
                            ("loss", pytest.approx(1 / 7), 6), ("lr", 0.5, 6),
                            ("loss", pytest.approx(1 / 7), 7), ("lr", 0.5, 7)]  # at end: global step 7
    # The first trigger past warm-up (step 3) only starts the clock; steps 5 and 6 are 2 and 1 apart.
    assert [(name, step) for name, _, step in rates.rows] == [("examples_per_sec", 5)]
    assert len(hooks[0].rates) == 1


def test_end_reads_only_outputs_a_hook_fetched_in_the_last_run_B10():
    """What end() can read of the outputs, and that outside end() outputs still exist only in a run."""
    read = {}

    class ReadsAtEnd(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"loss": "loss"})

        def end(self, session):
            read["loss"] = session.run("loss")
            with pytest.raises(tf.NotFoundError, match="'lr' .*fetched in the last run"):
                session.run("lr")  # published, but no hook asked for it

    with tf.train.MonitoredTrainingSession(hooks=[ReadsAtEnd()]) as sess:
        for _ in range(3):
            sess.run(zoo_step)
        with pytest.raises(tf.NotFoundError):
            sess.run("loss")  # between runs
    assert read == {"loss": pytest.approx(1 / 3)}


# --- a data-parallel framework (horovod/horovod horovod/tensorflow/__init__.py), two ranks ---------------

def test_the_broadcast_variables_hook_gives_every_rank_the_root_s_variables_B51(tmp_path):
    """tf1_real_programs_ranks.py: the hook's module guard needs tf.compat.v1.get_default_graph, its
    begin() tf.device(...); the broadcast op is a step function that after_create_session runs."""
    torch_distributed = pytest.importorskip("torch.distributed")
    if not torch_distributed.is_available():
        pytest.skip("torch has no distributed support")
    from distributed_world import run_gloo
    reports = run_gloo(["broadcast_hook"], tmp_path, world_size=2,
                       script=__import__("pathlib").Path(HERE) / "tf1_real_programs_ranks.py")["broadcast_hook"]
    for rank, report in reports.items():
        assert report["error"] is None, report.get("traceback")
        assert report["seen"]["w"] == pytest.approx(report["rank0_init"]), rank
        assert report["seen"]["b"] == [0, 0, 0] and report["seen"]["step"] == 0
        assert report["steps"] == [3, 3]


# --- a research library's metric hooks (tensorflow/tensor2tensor tensor2tensor/utils/metrics_hook.py) ----

class ScalarEvents:
    """The event reader the library's hooks use (TensorBoard's multiplexer: one accumulator per run
    directory, Reload(), Tags()["scalars"], Scalars(tag) → events with .step and .value), read with
    trainwatch's summary_iterator."""

    SCALARS = "scalars"

    def __init__(self, run_path_map):
        self._paths = dict(run_path_map)
        self._scalars = {run: {} for run in self._paths}

    def Reload(self):
        for run, path in self._paths.items():
            scalars = self._scalars[run] = {}
            for name in sorted(tf.gfile.Glob(os.path.join(path, "events.out.tfevents.*"))):
                for event in tf.train.summary_iterator(name):
                    if event.HasField("summary"):
                        for value in event.summary.value:
                            if value.HasField("simple_value"):
                                scalars.setdefault(value.tag, []).append(
                                    types.SimpleNamespace(step=event.step, value=value.simple_value))

    def GetAccumulator(self, run):
        scalars = self._scalars[run]
        return types.SimpleNamespace(Tags=lambda: {ScalarEvents.SCALARS: list(scalars)},
                                     Scalars=lambda tag: scalars[tag])


def has_plateaued(steps, values, num_steps, delta):
    """The library's test: no decrease by ``delta`` over the last ``num_steps`` steps."""
    earlier = [s for s in steps if s <= steps[-1] - num_steps]
    if len(steps) < 2 or not earlier:
        return False
    start = values[len(earlier) - 1]
    return all(start - value < delta for value in values[len(earlier) - 1:])


class MetricsBased(tf.train.SessionRunHook):
    """The library's base hook: the global step by handle, read once after the session is created,
    fetched as a list; every N steps it reloads the event files and asks a subclass."""

    _RUN_NAME = "run%d"

    def __init__(self, events_dir, tags, every_n_steps):
        self._tags = tags
        self._every_n_steps = every_n_steps
        self._start_step = None
        self._events = ScalarEvents({self._RUN_NAME % 0: events_dir})

    def begin(self):
        self._global_step_tensor = tf.train.get_global_step()

    def after_create_session(self, session, coord):
        if self._start_step is None:
            self._start_step = session.run(self._global_step_tensor)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs([self._global_step_tensor])

    def after_run(self, run_context, run_values):
        global_step = run_values.results[0]
        if (global_step - self._start_step) % self._every_n_steps != 0:
            return
        self._events.Reload()
        accumulator = self._events.GetAccumulator(self._RUN_NAME % 0)
        metrics = {tag: tuple(zip(*[(e.step, e.value) for e in accumulator.Scalars(tag)]))
                   for tag in accumulator.Tags()[ScalarEvents.SCALARS]}
        self._after_run(run_context, global_step, metrics)


class EarlyStopping(MetricsBased):
    def __init__(self, events_dir, tag, num_plateau_steps, plateau_delta, every_n_steps):
        super().__init__(events_dir, [tag], every_n_steps)
        self._num_plateau_steps, self._plateau_delta = num_plateau_steps, plateau_delta

    def _after_run(self, run_context, global_step, metrics):
        if self._tags[0] in metrics and has_plateaued(*metrics[self._tags[0]], self._num_plateau_steps,
                                                      self._plateau_delta):
            run_context.request_stop()


class PlateauOp(MetricsBased):
    """Fetches ``plateau_op`` in the run after the metric plateaued, once: an op run for its effect,
    which the step computes when a hook asks for it by name (W29)."""

    def __init__(self, events_dir, tag, plateau_op, num_plateau_steps, plateau_delta, every_n_steps):
        super().__init__(events_dir, [tag], every_n_steps)
        self._plateau_op = plateau_op
        self._num_plateau_steps, self._plateau_delta = num_plateau_steps, plateau_delta
        self._should_run_op = self._ever_ran = False

    def before_run(self, run_context):
        fetches = [self._global_step_tensor]
        if self._should_run_op and not self._ever_ran:
            fetches.append(self._plateau_op)
            self._should_run_op, self._ever_ran = False, True
        return tf.train.SessionRunArgs(fetches)

    def _after_run(self, run_context, global_step, metrics):
        if self._tags[0] in metrics and has_plateaued(*metrics[self._tags[0]], self._num_plateau_steps,
                                                      self._plateau_delta):
            self._should_run_op = True


def test_the_research_library_s_plateau_hooks_read_the_event_files_back_B50_W29(tmp_path):
    eval_writer = tf.summary.FileWriter(str(tmp_path / "eval"))
    decayed_at = []

    def train_op(ctx):  # loss falls by 1 a step to 5, then stays; an eval summary every step
        loss = max(10 - ctx.global_step, 5)
        eval_writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=loss)]), ctx.global_step)
        eval_writer.flush()
        outputs = {"loss": np.float32(loss)}
        if ctx.is_requested("lr_decay", explicitly=True):  # not on the default summary hook's "*" (W29)
            decayed_at.append(ctx.global_step)
            outputs["lr_decay"] = np.float32(0.5)
        return outputs

    events = str(tmp_path / "eval")
    hooks = [PlateauOp(events, "loss", "lr_decay", num_plateau_steps=3, plateau_delta=0.5, every_n_steps=2),
             EarlyStopping(events, "loss", num_plateau_steps=5, plateau_delta=0.5, every_n_steps=2)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks, save_summaries_steps=1) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    # Flat from step 5: plateaued over 3 steps when checked at step 8, over 5 at step 10.
    assert decayed_at == [9] and sess.global_step == 11
    eval_writer.close()


# --- the Estimator package's early stopping (tensorflow/estimator .../estimator/early_stopping.py) --------
# What its hooks and helpers call: tf.compat.v1.gfile.Exists/Glob and tf.compat.v1.train.summary_iterator
# over the evaluation's event files (a DataLossError skips the rest of a file, with a tf.compat.v1.logging
# warning), HasField("summary") / HasField("simple_value"); the chief's hook keeps the global step and an
# assign op it builds in begin(), runs the op through run_context.session when its predicate holds and
# stops; a worker's hook fetches the stop variable every run.

STOP_VARIABLE = "signal_early_stopping/STOP"  # the graph's stop variable, ported: a registered variable


def evaluation_events(eval_dir):
    if not tf.compat.v1.gfile.Exists(eval_dir):
        return
    for path in tf.compat.v1.gfile.Glob(os.path.join(eval_dir, "events.out.tfevents.*")):
        try:
            yield from tf.compat.v1.train.summary_iterator(path)
        except tf.errors.DataLossError as damage:
            tf.compat.v1.logging.warning("damaged event file %s skipped from here: %s", path, damage)


def metrics_by_step(eval_dir):
    table = collections.defaultdict(dict)
    for event in evaluation_events(eval_dir):
        if event.HasField("summary"):
            table[event.step].update({v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")})
    return {step: metrics for step, metrics in sorted(table.items()) if metrics}


def no_decrease_within(eval_dir, metric, max_steps):
    def predicate():
        best_step, best = None, float("inf")
        for step, metrics in metrics_by_step(eval_dir).items():
            if metrics[metric] < best:
                best_step, best = step, metrics[metric]
            if step - best_step >= max_steps:
                tf.compat.v1.logging.info("%s has not decreased for %d steps", metric, step - best_step)
                return True
        return False
    return predicate


class StopWhenPredicateHolds(tf.compat.v1.train.SessionRunHook):
    def __init__(self, predicate, every_steps):
        self._predicate = predicate
        self._timer = tf.compat.v1.train.SecondOrStepTimer(every_steps=every_steps)

    def begin(self):
        self._global_step_tensor = tf.compat.v1.train.get_global_step()
        self._stop_op = tf.compat.v1.assign(STOP_VARIABLE, True)  # built once, run later

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = run_values.results
        if not self._timer.should_trigger_for_step(step):
            return
        self._timer.update_last_triggered_step(step)
        if self._predicate():
            tf.compat.v1.logging.info("early stop at global step %d", step)
            run_context.session.run(self._stop_op)
            run_context.request_stop()


class StopWhenTheChiefStopped(tf.compat.v1.train.SessionRunHook):
    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(STOP_VARIABLE)

    def after_run(self, run_context, run_values):
        if run_values.results:
            tf.compat.v1.logging.info("the chief stopped early: stopping")
            run_context.request_stop()


def test_the_estimator_early_stopping_hooks_assign_the_stop_variable_and_stop_B50(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="trainwatch")
    eval_dir = str(tmp_path / "eval")
    writer = tf.summary.FileWriter(eval_dir)
    with open(os.path.join(eval_dir, "events.out.tfevents.0.damaged"), "wb") as damaged:
        damaged.write(b"\x10\x00\x00\x00\x00\x00\x00\x00garbage")  # a header whose checksum is wrong
    stop = np.zeros((), np.bool_)

    def train_op(ctx):  # an evaluation every 2 steps: the loss falls to step 4, then rises
        if ctx.global_step % 2 == 0:
            writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=abs(ctx.global_step - 4))]),
                               ctx.global_step)
            writer.flush()
        return {"loss": np.float32(1)}

    chief_hook = StopWhenPredicateHolds(no_decrease_within(eval_dir, "loss", 4), every_steps=1)
    with tf.train.MonitoredTrainingSession(hooks=[chief_hook], variables={STOP_VARIABLE: stop}) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert sess.global_step == 9 and bool(stop)  # best at 4, 4 steps without a decrease at 8
    assert "early stop at global step 8" in trainwatch_lines(caplog)
    assert any(line.startswith("damaged event file") for line in trainwatch_lines(caplog))
    assert list(metrics_by_step(eval_dir)) == [0, 2, 4, 6, 8]

    with tf.train.MonitoredTrainingSession(hooks=[StopWhenTheChiefStopped()], variables={STOP_VARIABLE: stop},
                                           is_chief=False) as worker:
        while not worker.should_stop():
            worker.run(train_op)
    assert worker.global_step == 1 and "the chief stopped early: stopping" in trainwatch_lines(caplog)
    writer.close()


# --- a small trainer library's hooks (tensorlab/tensorfx src/training/_hooks.py) ------------------------

# What its hooks do: the global step, loss and merged summary op come from the job; the log hook fetches
# all three only on the runs it logs (a list of fetches either way), logs with the logging module and
# writes the fetched summary plus a Summary it builds with its own FileWriter (given the graph); the
# checkpoint hook saves with the job's Saver from after_run and from end().

class StopAtMaxSteps(tf.train.SessionRunHook):
    def __init__(self, job):
        self._step_tensor, self._max_steps = job.training.global_steps, job.args.max_steps

    def before_run(self, context):
        return tf.train.SessionRunArgs(self._step_tensor)

    def after_run(self, context, values):
        if values.results >= self._max_steps:
            context.request_stop()


class LogAndSummarize(tf.train.SessionRunHook):
    def __init__(self, job):
        training = job.training
        self._fetch_step = [training.global_steps]
        self._fetch_all = [training.global_steps, training.loss, training.summary_op]
        self._every, self._max_steps = job.args.log_interval_steps, job.args.max_steps
        self._writer = tf.summary.FileWriter(job.summaries_path("train"))
        self._writer.add_graph(training.graph)
        self._steps_done = 0

    def before_run(self, context):
        upcoming = self._steps_done + 1
        logs = upcoming % self._every == 0 or upcoming + 1 >= self._max_steps
        return tf.train.SessionRunArgs(self._fetch_all if logs else self._fetch_step)

    def after_run(self, context, values):
        self._steps_done = values.results[0]
        if len(values.results) == 3:
            _, loss, summary = values.results
            logging.getLogger("trainer").info("step %d loss %.3f", self._steps_done, loss)
            self._writer.add_summary(summary, self._steps_done)
            throughput = tf.Summary.Value(tag="metrics/throughput", simple_value=4.0)
            self._writer.add_summary(tf.Summary(value=[throughput]), self._steps_done)
            self._writer.flush()


class SaveWithTheJobSaver(tf.train.SessionRunHook):
    def __init__(self, job):
        self._step_tensor, self._saver = job.training.global_steps, job.training.saver
        self._prefix = os.path.join(job.checkpoints_path, "model.ckpt")
        self._saved_at = 0
        self.saved = []

    def before_run(self, context):
        if self._saved_at == 0:  # until a save past step 0
            return tf.train.SessionRunArgs([self._step_tensor])

    def after_run(self, context, values):
        if values.results:
            (step,) = values.results
            self._save(context.session, step)

    def end(self, session):
        step = session.run(self._step_tensor)
        if step != self._saved_at:
            self._save(session, step)

    def _save(self, session, step):
        self.saved.append(self._saver.save(session, self._prefix, step))
        self._saved_at = step


def test_the_trainer_library_s_hooks_stop_log_write_summaries_and_save_B50(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="trainer")
    weights = np.zeros(3, np.float32)
    job = types.SimpleNamespace(
        training=types.SimpleNamespace(global_steps=tf.train.get_global_step(), loss="loss", summary_op="summary",
                                       graph=None, saver=tf.train.Saver({"w": weights})),
        args=types.SimpleNamespace(max_steps=6, log_interval_steps=2),
        checkpoints_path=str(tmp_path / "checkpoints"),
        summaries_path=lambda kind: str(tmp_path / "summaries" / kind))
    os.makedirs(job.checkpoints_path)

    def train_op(ctx):
        weights[:] += 1
        outputs = {"loss": np.float32(1.0 / (1 + ctx.global_step))}
        if ctx.is_requested("summary", explicitly=True):  # the graph's merged summary op: its bytes
            summary = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=float(outputs["loss"]))])
            outputs["summary"] = summary.SerializeToString()
        return outputs

    checkpoints = SaveWithTheJobSaver(job)
    with tf.train.MonitoredTrainingSession(hooks=[StopAtMaxSteps(job), LogAndSummarize(job), checkpoints],
                                           variables={"w": weights}) as sess:
        while not sess.should_stop():
            sess.run(train_op)

    assert sess.global_step == 7  # the stale step fetched in the run at 6 reaches max_steps
    assert [r.getMessage() for r in caplog.records if r.name == "trainer"] == [
        "step 2 loss 0.333", "step 4 loss 0.200", "step 5 loss 0.167", "step 6 loss 0.143"]
    (events,) = tf.gfile.Glob(str(tmp_path / "summaries" / "train" / "events.out.tfevents.*"))
    written = [(e.step, v.tag) for e in tf.train.summary_iterator(events) if e.HasField("summary")
               for v in e.summary.value]
    assert written == [(s, tag) for s in (2, 4, 5, 6) for tag in ("loss", "metrics/throughput")]
    # Saved after the first two runs (the fetched step is 0 first), then in end() at the final step.
    assert [os.path.basename(p) for p in checkpoints.saved] == ["model.ckpt-0", "model.ckpt-1", "model.ckpt-7"]
    assert tf.load_variable(checkpoints.saved[-1], "w").tolist() == [7, 7, 7]


# --- Ctrl-C in a MonitoredTrainingSession loop, and the run that follows ---------------------------------

@pytest.fixture
def ctrl_c_interrupts():
    """Python's own SIGINT handler, as in a terminal: a runner started in the background of a shell
    without job control (``cmd &``) inherits SIGINT ignored, and Python then installs no handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_ends_the_loop_without_end_and_the_rerun_resumes_from_the_last_checkpoint_H15(tmp_path, ctrl_c_interrupts):
    weights = np.zeros(2, np.float32)
    ends = []

    class CountsEnds(tf.train.SessionRunHook):
        def end(self, session):
            ends.append(session.run("global_step"))

    def run(interrupt_at_step):
        def train_op(ctx):
            if ctx.global_step == interrupt_at_step:
                os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, while the step runs
            weights[:] += 1
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=4,
                                               hooks=[tf.train.StopAtStepHook(last_step=10), CountsEnds()],
                                               scaffold=tf.train.Scaffold(variables={"w": weights})) as sess:
            while not sess.should_stop():
                sess.run(train_op)
        return sess

    with pytest.raises(KeyboardInterrupt):
        run(interrupt_at_step=6)
    assert ends == [] and weights.tolist() == [6, 6]  # no end(), no final save: TF's exit on a foreign error
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-4")
    sess = run(interrupt_at_step=None)  # the same directory, the same process: nothing is left locked
    assert sess.global_step == 10 and ends == [10] and weights.tolist() == [10, 10]  # restored at 4


def test_a_hook_that_turns_ctrl_c_into_a_stop_request_ends_with_the_final_checkpoint(tmp_path, ctrl_c_interrupts):
    """A clean-stop hook: it installs a SIGINT handler in its first before_run that sets a flag, and
    requests a stop in after_run, so the session ends normally and saves."""

    class StopOnCtrlC(tf.train.SessionRunHook):
        def __init__(self):
            self._interrupted, self._previous = False, None

        def before_run(self, run_context):
            if self._previous is None:  # as late as possible: Ctrl-C keeps its meaning until training runs
                self._previous = signal.signal(signal.SIGINT, self._on_sigint)

        def after_run(self, run_context, run_values):
            if self._interrupted:
                run_context.request_stop()

        def _on_sigint(self, signum, frame):
            self._interrupted = True
            signal.signal(signal.SIGINT, self._previous)  # a second Ctrl-C interrupts at once

    def train_op(ctx):
        if ctx.global_step == 6:
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.getsignal(signal.SIGINT)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=[StopOnCtrlC()],
                                           variables={"w": np.zeros(2, np.float32)}) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert sess.global_step == 7 and tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")
    assert signal.getsignal(signal.SIGINT) is previous


# --- the TF names these programs call around their hooks --------------------------------------------------

def test_gfile_works_on_local_paths_with_tf_s_errors(tmp_path):
    root = str(tmp_path / "a")
    tf.gfile.MakeDirs(os.path.join(root, "b", "c"))
    tf.gfile.MakeDirs(root)  # exists: fine
    with tf.gfile.GFile(os.path.join(root, "b", "f.txt"), "w") as f:
        f.write("x")
    assert tf.gfile.Exists(os.path.join(root, "b", "f.txt")) and tf.gfile.IsDirectory(root)
    assert sorted(tf.gfile.ListDirectory(os.path.join(root, "b"))) == ["c", "f.txt"]
    assert tf.gfile.Glob(os.path.join(root, "b", "*.txt")) == [os.path.join(root, "b", "f.txt")]
    assert [d for d, _, _ in tf.gfile.Walk(root)][0] == root
    tf.gfile.Copy(os.path.join(root, "b", "f.txt"), os.path.join(root, "g.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Rename(os.path.join(root, "g.txt"), os.path.join(root, "b", "f.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Mkdir(root)
    with pytest.raises(tf.errors.NotFoundError, match="missing"):
        tf.gfile.GFile(os.path.join(root, "missing"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.ListDirectory(os.path.join(root, "missing"))
    with pytest.raises(tf.errors.UnimplementedError, match="local paths only"):
        tf.gfile.Exists("gs://bucket/x")
    tf.gfile.DeleteRecursively(root)
    assert not tf.gfile.Exists(root) and tf.compat.v1.gfile is tf.gfile
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.DeleteRecursively(root)


def test_tf_logging_lines_go_to_the_trainwatch_logger_with_the_hooks_lines(caplog):
    caplog.set_level(logging.DEBUG, logger="trainwatch")
    previous = logging.getLogger("trainwatch").level
    try:
        tf.logging.set_verbosity(tf.logging.WARN)
        assert tf.compat.v1.logging.get_verbosity() == logging.WARNING
        tf.compat.v1.logging.info("hidden %d", 1)
        tf.logging.warning("shown %d", 2)
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("shown %s", "too")
    finally:
        logging.getLogger("trainwatch").setLevel(previous)
    assert trainwatch_lines(caplog) == ["shown 2", "shown too"]


def test_assign_is_a_step_function_that_writes_the_variable():
    w, v = np.zeros(3, np.float32), np.zeros(2, np.int64)
    with tf.MonitoredSession(session_creator=tf.ChiefSessionCreator(scaffold=tf.Scaffold(variables={"w": w}))) as sess:
        sess.run(lambda ctx: None)
        assert sess.run_without_hooks(tf.assign("w", 2.5)) is None
        sess.run_without_hooks(tf.compat.v1.assign(v, [4, 5]))  # the array itself
        sess.run_without_hooks(tf.assign(tf.train.get_global_step(), 40))
        assert sess.global_step == 40
        with pytest.raises(tf.NotFoundError, match="'nope' is not a registered variable"):
            sess.run_without_hooks(tf.assign("nope", 1))
    assert w.tolist() == [2.5, 2.5, 2.5] and v.tolist() == [4, 5]


def test_graph_only_names_are_accepted_B51():
    assert tf.get_default_graph() is None and tf.compat.v1.get_default_graph() is None
    with tf.device("/cpu:0"), tf.compat.v1.device(""):
        pass
    config = tf.ConfigProto(allow_soft_placement=True, gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.4))
    config.gpu_options.allow_growth = True
    assert config.allow_soft_placement and config.gpu_options.per_process_gpu_memory_fraction == 0.4
    assert tf.compat.v1.ConfigProto().gpu_options is not None
    with tf.train.MonitoredTrainingSession(config=config) as sess:
        sess.run(lambda ctx: None)
    assert sess.global_step == 1


def test_app_run_calls_main_and_exits_with_what_it_returns():
    seen = []
    with pytest.raises(SystemExit) as exit_status:
        tf.app.run(main=seen.append, argv=["train.py", "--steps=3"])
    assert exit_status.value.code is None and seen == [["train.py", "--steps=3"]]
    with pytest.raises(SystemExit) as exit_status:
        tf.compat.v1.app.run(main=lambda argv: 3, argv=[])
    assert exit_status.value.code == 3


def test_tf_module_imports_have_trainwatch_modules_of_the_same_names():
    """The porting guide's import table: a library importing TF's modules edits only the import line."""
    from trainwatch import basic_session_run_hooks, gfile, monitored_session, session_run_hook, state_ops
    from trainwatch import summary as summary_iterator
    from trainwatch import tf_logging, training_util
    assert session_run_hook.SessionRunArgs is tf.train.SessionRunArgs
    assert basic_session_run_hooks.SecondOrStepTimer is tf.train.SecondOrStepTimer
    assert monitored_session.MonitoredTrainingSession is tf.train.MonitoredTrainingSession
    assert training_util.get_global_step() is tf.train.get_global_step() and gfile is tf.gfile

    def unwrapped(function):  # the package's entry points wrap the module functions (tracebacks)
        return getattr(function, "__wrapped__", function)
    assert tf_logging is tf.logging and unwrapped(state_ops.assign) is unwrapped(tf.assign)
    assert unwrapped(summary_iterator.summary_iterator) is unwrapped(tf.train.summary_iterator)


def test_set_verbosity_info_shows_the_program_s_and_the_hooks_lines_as_tf_did(monkeypatch, capsys):
    """TF's first tf.logging call gives its logger a stderr handler unless the root logger has one, so a
    script's set_verbosity(INFO) shows the hooks' lines; a script configuring nothing else sees them."""
    from trainwatch import tf_logging
    logger = logging.getLogger("trainwatch")
    previous_level, previous_handlers = logger.level, list(logger.handlers)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # a script that configured no logging
    monkeypatch.setattr(tf_logging, "_handler", None)
    try:
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("from the program")
        with tf.train.MonitoredSession(hooks=[tf.train.LoggingTensorHook(["loss"], every_n_iter=1)]) as sess:
            sess.run(lambda ctx: {"loss": np.float32(0.5)})
    finally:
        logger.handlers[:] = previous_handlers
        logger.setLevel(previous_level)
    err = capsys.readouterr().err
    assert "INFO:trainwatch:from the program\n" in err and "INFO:trainwatch:loss = 0.5" in err


def test_code_importing_tensorflow_compat_v1_as_tf_ports_by_its_import_line():
    import trainwatch.compat.v1 as tf1  # was: import tensorflow.compat.v1 as tf
    assert tf1 is tf.compat.v1 and tf1.logging is tf.logging and tf1.Summary is tf.Summary

    class StopAtThree(tf1.estimator.SessionRunHook):
        def begin(self):
            self._global_step_tensor = tf1.train.get_global_step()

        def before_run(self, run_context):
            return tf1.train.SessionRunArgs(self._global_step_tensor)

        def after_run(self, run_context, run_values):
            if run_values.results >= 2:
                run_context.request_stop()

    with tf1.train.MonitoredTrainingSession(hooks=[StopAtThree()], config=tf1.ConfigProto()) as sess:
        while not sess.should_stop():
            sess.run(lambda ctx: None)
    assert sess.global_step == 3


def test_a_ctrl_c_traceback_ends_in_the_user_s_step_not_in_trainwatch_H34(ctrl_c_interrupts):
    def train_op(ctx):
        os.kill(os.getpid(), signal.SIGINT)  # THE STEP LINE: Ctrl-C, raised as this call returns

    with pytest.raises(KeyboardInterrupt) as caught:
        with tf.train.MonitoredTrainingSession() as sess:
            sess.run(train_op)  # THE CALL
    frames = __import__("traceback").extract_tb(caught.value.__traceback__)
    package = [f for f in frames if "/trainwatch/" in f.filename]
    assert frames[-1].line.endswith("# THE STEP LINE: Ctrl-C, raised as this call returns"), frames
    assert any(f.line.endswith("# THE CALL") for f in frames) and len(package) <= 1, frames
