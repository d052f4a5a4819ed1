"""Paths to and from the library: a path argument may be ``str`` (also one os.fsdecode gave for a name
that is not UTF-8), ``bytes`` or ``os.PathLike``, and reaches the library as os.fsencode's bytes; a
path the library returns is ``str`` as os.fsdecode gives it, so that it can be passed back as it is."""
import os


def encode(value, what):
    """``value`` as the bytes of the file name; TypeError naming ``what`` for anything else."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be a path (str, bytes or os.PathLike); got {type(value).__name__}")
    return os.fsencode(value)


def decode(path):
    """A path from the library (SWIG decodes it as UTF-8 with surrogateescape) as os.fsdecode's str."""
    return os.fsdecode(path.encode("utf-8", "surrogateescape"))
