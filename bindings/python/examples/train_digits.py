"""A real PyTorch training run supervised by trainwatch: the main job behind `bash tools/demo`.

An MLP learns the handwritten digits that Debian's python3-sklearn ships, under a
MonitoredTrainingSession that restores the latest checkpoint, saves one every 50 steps, writes
TensorBoard summaries of what the step publishes and the step rate to the same directory, and guards
the loss with a NanTensorHook that rolls back to the last good checkpoint when training diverges. One learning-rate spike (a classic divergence) is injected to
show it: the run rolls back and carries on. Run it again and it resumes where it stopped.

usage: train_digits.py [--checkpoint-dir DIR] [--steps N] [--spike-at STEP | --no-spike] [--fresh]
Exits non-zero if the held-out accuracy is below 90%.
"""
import argparse
import logging
import pathlib
import shutil
import sys
import time

import numpy as np
import sklearn.datasets
import torch

import trainwatch as tw

BATCH = 32
LEARNING_RATE = 0.1


class Trainer:
    """The model, its data, and one SGD step as a trainwatch step function."""

    def __init__(self, seed=0):
        torch.manual_seed(seed)
        x, y = sklearn.datasets.load_digits(return_X_y=True)
        order = np.random.default_rng(seed).permutation(len(x))
        x = torch.from_numpy((x[order] / 16.0).astype(np.float32))
        y = torch.from_numpy(y[order].astype(np.int64))
        self.train_x, self.train_y = x[:1500], y[:1500]
        self.test_x, self.test_y = x[1500:], y[1500:]
        self.model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
        self.learning_rate = LEARNING_RATE
        self.spike_at = None  # a global step where one step runs with a huge learning rate

    def variables(self):
        """What checkpoints hold: the parameters themselves, registered zero copy."""
        return dict(self.model.named_parameters())

    def batch(self, step):
        start = (step * BATCH) % (len(self.train_x) - BATCH)
        return {"x": self.train_x[start:start + BATCH], "y": self.train_y[start:start + BATCH]}

    def step(self, ctx):
        """One SGD step on the fed batch; publishes "loss", and "accuracy" when a hook asks for it."""
        learning_rate = self.learning_rate
        if ctx.global_step == self.spike_at:
            self.spike_at = None  # one-off: the retried step after the rollback trains normally
            learning_rate = 1e30
            logging.getLogger("train_digits").warning("injecting a learning-rate spike at step %d", ctx.global_step)
        logits = self.model(ctx.feeds["x"])
        loss = torch.nn.functional.cross_entropy(logits, ctx.feeds["y"])
        self.model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for parameter in self.model.parameters():
                parameter -= learning_rate * parameter.grad
        outputs = {"loss": loss.detach()}
        if ctx.is_requested("accuracy"):
            outputs["accuracy"] = (logits.argmax(1) == ctx.feeds["y"]).float().mean()
        return outputs

    def evaluate(self, ctx):
        with torch.no_grad():
            return float((self.model(self.test_x).argmax(1) == self.test_y).float().mean())


class Progress(tw.SessionRunHook):
    """Every `every` steps: a progress line with the loss, batch accuracy and speed; notices rollbacks
    (the global step going backwards)."""

    def __init__(self, every=50):
        self._every = every
        self._log = logging.getLogger("train_digits")
        self._last = None

    def after_create_session(self, session, coord):
        self._last = (session.global_step, time.perf_counter())
        self._log.info("starting at global step %d", session.global_step)

    def before_run(self, run_context):
        return tw.SessionRunArgs({"loss": "loss", "accuracy": "accuracy"})

    def after_run(self, run_context, run_values):
        step = run_context.session.global_step  # after the run: a rollback shows as a step back
        last_step, last_time = self._last
        if step <= last_step:
            self._log.warning("rolled back to global step %d; training goes on", step)
            self._last = (step, time.perf_counter())
        elif step % self._every == 0:
            now = time.perf_counter()
            self._log.info("step %4d  loss %.4f  batch accuracy %.2f  (%.0f steps/s)", step,
                           run_values.results["loss"], run_values.results["accuracy"],
                           (step - last_step) / (now - last_time))
            self._last = (step, now)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint-dir", default="build-demo/train_digits")
    parser.add_argument("--steps", type=int, default=600, help="steps to train in this invocation")
    parser.add_argument("--spike-at", type=int, default=None, help="global step of the learning-rate spike "
                        "(default: 60 percent into this invocation)")
    parser.add_argument("--no-spike", action="store_true")
    parser.add_argument("--fresh", action="store_true", help="delete the checkpoint directory first")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    # TF's per-save listener lines drown the progress lines; keep "Saving checkpoints …".
    logging.getLogger("trainwatch").addFilter(lambda record: "checkpoint listeners" not in record.getMessage())
    if args.fresh:
        shutil.rmtree(args.checkpoint_dir, ignore_errors=True)

    trainer = Trainer()
    hooks = [tw.NanTensorHook("loss", action="rollback", max_rollbacks=3),
             tw.StopAtStepHook(num_steps=args.steps),
             Progress()]
    with tw.MonitoredTrainingSession(checkpoint_dir=args.checkpoint_dir, save_checkpoint_steps=50,
                                     save_summaries_steps=25, log_step_count_steps=200,
                                     variables=trainer.variables(), hooks=hooks) as sess:
        start = sess.global_step
        if not args.no_spike:
            trainer.spike_at = args.spike_at if args.spike_at is not None else start + args.steps * 6 // 10 + 7
        while not sess.should_stop():
            sess.run(trainer.step, feed_dict=trainer.batch(sess.global_step))
        accuracy = sess.run_without_hooks(trainer.evaluate)
        final = sess.global_step
    log = logging.getLogger("train_digits")
    log.info("trained global steps %d → %d; held-out accuracy %.3f", start, final, accuracy)
    losses = [event.scalars["loss"] for path in sorted(pathlib.Path(args.checkpoint_dir).glob("events.out.tfevents.*"))
              for event in tw.summary_iterator(path) if "loss" in event.scalars]
    log.info("TensorBoard: %d loss summaries in %s (tensorboard --logdir %s)", len(losses), args.checkpoint_dir,
             args.checkpoint_dir)
    log.info("latest checkpoint %s; run again to resume from it", tw.latest_checkpoint(args.checkpoint_dir))
    return 0 if accuracy >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
