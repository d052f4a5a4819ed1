"""Variables that hold one slice of a tensor sharded across the ranks of a job (FSDP, ZeRO, tensor
parallelism): ``variables={"w": tw.Shard(rows, global_shape=(8, 4), offset=2)}``.

A Shard wraps the rank's own array (numpy, CPU torch tensor — bfloat16 included — registered zero copy
as any variable) with the global tensor's shape and where the slice starts in it. Every rank registers
its slice under the same name with the same dtype and global shape; with a collective, checkpoints then
hold each rank's slices in its own part file, committed once by the chief (docs/checkpoint-format.md,
"Sharded checkpoints"), and ``load_variable`` reads the whole tensor back. Plain arrays next to Shards
are replicated: the chief saves them.
"""
import numbers

from . import native


class Shard:
    """One rank's box of a global tensor: ``tensor`` (contiguous), ``global_shape`` (one int per
    dimension), ``offset`` — an int (the first dimension's, the others 0: a slice of rows) or one int per
    dimension. The library checks that the box lies inside the global shape."""

    __slots__ = ("tensor", "global_shape", "offset")

    def __init__(self, tensor, global_shape, offset=0):
        self.tensor = tensor
        self.global_shape = _ints(global_shape, "global_shape")
        if isinstance(offset, numbers.Integral):
            self.offset = _ints((offset,) + (0,) * max(len(self.global_shape) - 1, 0), "offset")
        else:
            self.offset = _ints(offset, "offset")

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
