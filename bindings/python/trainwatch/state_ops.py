"""TF1's ``tf.assign(ref, value)`` (``tf.compat.v1.assign``) as trainwatch runs ops: a step function.

TF code builds the op once (a hook's ``begin``) and runs it later with ``session.run(op)``; in
trainwatch ``session.run(step_fn)`` runs a step without hooks and without moving the global step, so
the op is a step function that writes ``value`` into the variable when it runs."""
from .errors import NotFoundError
from .training_util import GLOBAL_STEP_NAME

__all__ = ["assign"]


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Returns a step function that sets the variable ``ref`` to ``value`` when run
    (``session.run(op)``, ``run_context.session.run(op)``).

    Args:
      ref: a registered variable's name (or the global step's handle), or the variable's array
        itself (numpy, torch: written in place).
      value: the new value (broadcast to the variable's shape, cast to its type).
      validate_shape: accepted for TF code (the variable keeps its shape).
      use_locking: accepted for TF code.
      name: accepted for TF code.

    Returns:
      ``step(ctx)``: writes the value and returns None. Run by name, a ``ref`` that is not a
      registered variable raises ``NotFoundError`` when the step runs.
    """
    del validate_shape, use_locking, name

    def assign_step(ctx):
        if not isinstance(ref, str):
            ref[...] = value
        elif ref == GLOBAL_STEP_NAME:
            ctx.set_global_step(int(value))
        else:
            variables = ctx.session.variables
            if ref not in variables:
                raise NotFoundError(None, None, f"assign: '{ref}' is not a registered variable")
            variables[ref][...] = value

    return assign_step
