"""A TF1 user's own NaN hook, ported to trainwatch unchanged apart from the import.

The TF1 original subclassed tf.train.NanTensorHook and overrode after_run with the action its author
needed: log the step where the loss went bad, keep a diagnostic of the model at that step, then let
the built-in check (and its fail_on_nan_loss action) run — or not. In trainwatch the same class body
works: ``run_values.results`` is the loss value (NanTensorHook's SessionRunArgs(loss_tensor)),
``run_context.session.run(...)`` reads the global step and the variables by name, and
``super().after_run(...)`` is the built-in NaN check (NanLossDuringTrainingError, or a stop request with
fail_on_nan_loss=False). Not calling it replaces the built-in action with this one.

    from NanTensorHookCustom import NanTensorHookCustom as nanhook
    hooks = [nanhook("loss", fail_on_nan_loss=True, diagnostics_dir="nan-diagnostics")]
"""
import logging
import os

import numpy as np

import trainwatch as tw  # TF1: import tensorflow as tf … tf.train.NanTensorHook

log = logging.getLogger(__name__)


class NanTensorHookCustom(tw.NanTensorHook):
    """NanTensorHook that first records each diverged step and saves the model's variables at the first.

    ``builtin_check=False`` leaves out ``super().after_run``: training goes on past a NaN (the custom
    action only)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True, diagnostics_dir=None, builtin_check=True):
        super().__init__(loss_tensor, fail_on_nan_loss)
        self.diagnostics_dir = diagnostics_dir
        self.builtin_check = builtin_check
        self.nan_steps = []   # the global step of every run whose loss was NaN
        self.diagnostics = []  # the file written

    def after_run(self, run_context, run_values):
        loss = run_values.results
        if np.isnan(loss):
            session = run_context.session
            step = session.run("global_step")  # TF1: session.run(tf.train.get_global_step())
            log.warning("NaN loss %s at global step %d", loss, step)
            self.nan_steps.append(int(step))
            if self.diagnostics_dir is not None and not self.diagnostics:  # where it first diverged
                self._save_diagnostic(session, step, loss)
        if self.builtin_check:
            super().after_run(run_context, run_values)

    def _save_diagnostic(self, session, step, loss):
        names = sorted(session.variables)  # TF1: tf.trainable_variables()
        values = session.run(names)        # TF1: session.run(variables)
        os.makedirs(self.diagnostics_dir, exist_ok=True)
        path = os.path.join(self.diagnostics_dir, f"nan-step-{step}.npz")
        np.savez(path, loss=loss, **{name.replace("/", "__"): value for name, value in zip(names, values)})
        self.diagnostics.append(path)
