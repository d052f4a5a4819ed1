"""Variables that hold one slice of a tensor sharded across the ranks of a job (FSDP, ZeRO, tensor
parallelism): ``variables={"w": tw.Shard(rows, global_shape=(8, 4), offset=2)}``.

A Shard wraps the rank's own array (numpy, torch tensor — bfloat16 and CUDA included — registered zero copy
as any variable) with the global tensor's shape and where the slice starts in it. Every rank registers
its slice under the same name with the same dtype and global shape; with a collective, checkpoints then
hold each rank's slices in its own part file, committed once by the chief (docs/checkpoint-format.md,
"Sharded checkpoints"), and ``load_variable`` reads the whole tensor back. Plain arrays next to Shards
are replicated: the chief saves them.
"""
import numbers

from . import native


class Shard:
    """One rank's box of a global tensor. The library checks that the box lies inside the global
    shape. A Shard whose shape or offset is not a sequence of int64 raises (TypeError, ValueError)
    when it is registered — by a Saver or a session — not when it is built: in a job that is where
    every rank learns of it."""

    __slots__ = ("tensor", "global_shape", "offset", "_error")

    def __init__(self, tensor, global_shape, offset=0):
        # A failed check is raised at registration, on every rank of a job (D1).
        """Wraps this rank's slice.

        Args:
          tensor: the rank's own contiguous array (numpy, torch tensor, CUDA included).
          global_shape: the whole tensor's shape, one int per dimension.
          offset: where the slice starts: an int (the first dimension's, the others 0: a slice of
            rows) or one int per dimension.
        """
        self.tensor = tensor
        self.global_shape, self.offset, self._error = global_shape, offset, None
        try:
            self.global_shape = _ints(global_shape, "global_shape")
            if isinstance(offset, numbers.Integral):
                self.offset = _ints((offset,) + (0,) * max(len(self.global_shape) - 1, 0), "offset")
            else:
                self.offset = _ints(offset, "offset")
        except (TypeError, ValueError) as error:
            self._error = error

    def __repr__(self):
        return f"Shard({type(self.tensor).__name__}, global_shape={self.global_shape}, offset={self.offset})"


def _ints(values, what):
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of ints; got {type(values).__name__}") from None
    if not all(isinstance(v, numbers.Integral) for v in items):
        raise TypeError(f"{what} must be a sequence of ints; got {items!r}")
    if not all(-2**63 <= v < 2**63 for v in items):
        raise ValueError(f"{what} must hold int64 values; got {items!r}")
    return tuple(int(v) for v in items)


def arrays(variables):
    """name → the registered array itself (a Shard's tensor), as sessions hand variables back."""
    return {name: value.tensor if isinstance(value, Shard) else value for name, value in variables.items()}


def register(variables, options=None):
    """A native TensorSet viewing every variable (name → array or Shard, zero copy, writable), and — when
    ``options`` (native.Options) is given — each added to it: Shards as shards, the others replicated."""
    if not isinstance(variables, dict):
        raise TypeError(f"variables must be a dict of name → array; got {type(variables).__name__}")
    for value in variables.values():
        if isinstance(value, Shard) and value._error is not None:
            raise value._error
    held = native.TensorSet()
    held.add_dict(arrays(variables), True, "variable")
    if options is not None:
        for tensor in held.tensors():
            shard = variables[tensor.name()]
            if isinstance(shard, Shard):
                options.add_shard(tensor, shard.global_shape, shard.offset)
            else:
                options.add_variable(tensor)
    return held


def register_or_record(variables, options):
    """register(variables, options) for a rank that goes on creating its session or Saver whatever
    happens: (TensorSet, None), or (None, the exception) with the failure kept on ``options`` (the
    library keeps its own; this records the package's checks too, tw_options_record_error). The session or
    Saver created from them then fails — in a job on every rank at once, naming this rank and its reason
    (D1) — and this rank raises the exception itself (raise_registration_failure)."""
    try:
        return register(variables, options), None
    except Exception as error:  # noqa: BLE001 — whatever it is, the other ranks must hear of it
        code = getattr(error, "error_code", native.TW_INVALID_ARGUMENT)
        text = str(error) if hasattr(error, "error_code") else f"{type(error).__name__}: {error}"
        options.record_error(code, text)
        return None, error


def raise_registration_failure(failure, job_error=None):
    """This rank's own registration failure (register_or_record), chained to what creating its session
    or Saver raised (every rank's error naming this rank)."""
    raise failure from job_error
