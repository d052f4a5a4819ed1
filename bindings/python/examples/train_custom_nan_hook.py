"""The seed program: a TF1 training script with its author's own NaN hook, ported to trainwatch.

A linear model (PyTorch) fits y = 3x + 1 by SGD under MonitoredTrainingSession; at step --nan-at the
input batch holds a NaN, so that run's loss is NaN. The hook is the user's NanTensorHookCustom (a
subclass of NanTensorHook, imported as TF1 code imported it): it records the step and saves a
diagnostic, then runs the built-in check — which fails training with NanLossDuringTrainingError — or,
with --without-builtin-check, does not, and training goes on to --steps.

usage: train_custom_nan_hook.py [--steps N] [--nan-at STEP] [--without-builtin-check] [--dir DIR]
Exits 1 when training failed on the NaN, 0 when it ran to the end.
"""
import argparse
import logging
import pathlib
import sys
import tempfile

import numpy as np
import torch

import trainwatch as tw
from NanTensorHookCustom import NanTensorHookCustom as nanhook

LEARNING_RATE = 0.05


def train(directory, steps=40, nan_at=10, builtin_check=True):
    """Trains; returns (hook, the step the session reached, the exception that ended training or None)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    loss_fn = torch.nn.MSELoss()
    generator = np.random.default_rng(0)

    # TF1: the graph (placeholders, loss, train_op). trainwatch: the step function does what train_op did
    # and publishes the loss under the name the hooks fetch.
    def train_step(ctx):
        x = torch.from_numpy(ctx.feeds["x"])
        loss = loss_fn(model(x), 3 * x + 1)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= LEARNING_RATE * p.grad
        return {"loss": loss.detach()}

    def next_batch(step):
        x = generator.uniform(-1, 1, (16, 1)).astype(np.float32)
        if step == nan_at:
            x[0, 0] = np.nan  # a corrupt sample: this run's loss is NaN
        return {"x": x}

    loss = "loss"  # TF1: loss = tf.losses.mean_squared_error(…)
    hooks = [nanhook(loss, fail_on_nan_loss=True, diagnostics_dir=str(directory / "nan"),
                     builtin_check=builtin_check),
             tw.StopAtStepHook(last_step=steps)]
    variables = {name: p.data for name, p in model.named_parameters()}  # what checkpoints hold
    reached, error = 0, None
    try:
        with tw.MonitoredTrainingSession(checkpoint_dir=str(directory / "ckpt"), hooks=hooks,
                                         variables=variables, save_summaries_steps=None,
                                         log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train_step, feed_dict=next_batch(sess.run("global_step")))
                reached = int(sess.run("global_step"))
    except tw.NanLossDuringTrainingError as e:
        error = e
    return hooks[0], reached, error


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--nan-at", type=int, default=10)
    parser.add_argument("--without-builtin-check", action="store_true")
    parser.add_argument("--dir", type=pathlib.Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.dir or pathlib.Path(scratch)
        hook, reached, error = train(directory, args.steps, args.nan_at, not args.without_builtin_check)
        first = hook.nan_steps[0] if hook.nan_steps else None
        print(f"NaN loss in {len(hook.nan_steps)} runs (first at global step {first}); diagnostic: "
              f"{hook.diagnostics}; reached step {reached}")
        if error is not None:
            print(f"training failed: {type(error).__name__}: {error}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
