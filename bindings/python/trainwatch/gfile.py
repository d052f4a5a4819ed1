"""TF1's ``tf.gfile`` (``tf.compat.v1.gfile``) on the local file system, for the file handling TF1
programs and hook libraries do around training: ``Exists``, ``Glob``, ``MakeDirs``,
``DeleteRecursively``, ``GFile``, … with TF's errors (``NotFoundError``, ``AlreadyExistsError``).

Only local paths: a path with a scheme ("gs://", "hdfs://") raises ``UnimplementedError``, since
trainwatch reads and writes its own files locally too.
"""
import glob as _glob
import os
import shutil

from .errors import AlreadyExistsError, NotFoundError, PermissionDeniedError, UnimplementedError

__all__ = ["Exists", "IsDirectory", "Glob", "ListDirectory", "MakeDirs", "Mkdir", "Remove", "DeleteRecursively",
           "Rename", "Copy", "Walk", "GFile", "Open"]


def _local(path):
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if "://" in path:
        raise UnimplementedError(None, None, f"{path}: trainwatch's gfile reads and writes local paths only")
    return path


def _os_error(error, path):
    """TF's error class for an OSError on ``path``."""
    message = f"{path}; {error.strerror or error}"
    if isinstance(error, FileNotFoundError):
        return NotFoundError(None, None, message)
    if isinstance(error, FileExistsError):
        return AlreadyExistsError(None, None, message)
    if isinstance(error, PermissionError):
        return PermissionDeniedError(None, None, message)
    return error


def Exists(filename):
    """Whether ``filename`` (a file or a directory) exists.

    Args:
      filename: a local path.
    """
    return os.path.exists(_local(filename))


def IsDirectory(dirname):
    """Whether ``dirname`` is a directory.

    Args:
      dirname: a local path.
    """
    return os.path.isdir(_local(dirname))


def Glob(filename):
    """The paths matching the pattern ``filename`` (``*``, ``?``, ``[…]``), or a list of patterns.

    Args:
      filename: a pattern, or a list of patterns.

    Returns:
      The matching paths, as a list.
    """
    patterns = filename if isinstance(filename, (list, tuple)) else [filename]
    return [match for pattern in patterns for match in _glob.glob(_local(pattern))]


def ListDirectory(dirname):
    """The names of the entries of ``dirname`` (not "." and "..").

    Args:
      dirname: a local directory.

    Raises:
      NotFoundError: ``dirname`` is not a directory.
    """
    path = _local(dirname)
    if not os.path.isdir(path):
        raise NotFoundError(None, None, f"Could not find directory {path}")
    return os.listdir(path)


def MakeDirs(dirname):
    """Creates ``dirname`` and any missing parents; an existing directory is fine.

    Args:
      dirname: a local path.
    """
    path = _local(dirname)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise _os_error(error, path) from None


def Mkdir(dirname):
    """Creates the directory ``dirname`` (its parent must exist).

    Args:
      dirname: a local path.

    Raises:
      AlreadyExistsError: it exists.
      NotFoundError: the parent does not.
    """
    path = _local(dirname)
    try:
        os.mkdir(path)
    except OSError as error:
        raise _os_error(error, path) from None


def Remove(filename):
    """Deletes the file ``filename``.

    Args:
      filename: a local file.

    Raises:
      NotFoundError: it does not exist.
    """
    path = _local(filename)
    try:
        os.remove(path)
    except OSError as error:
        raise _os_error(error, path) from None


def DeleteRecursively(dirname):
    """Deletes ``dirname`` and everything under it (or a single file).

    Args:
      dirname: a local path.

    Raises:
      NotFoundError: it does not exist.
    """
    path = _local(dirname)
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    except OSError as error:
        raise _os_error(error, path) from None


def _move_or_copy(operation, source, target, overwrite):
    """Rename's and Copy's shared rule: TF's AlreadyExistsError unless ``overwrite``, OS errors as TF's."""
    old, new = _local(source), _local(target)
    if not overwrite and os.path.exists(new):
        raise AlreadyExistsError(None, None, f"{new}; file already exists")
    try:
        operation(old, new)
    except OSError as error:
        raise _os_error(error, old) from None


def Rename(oldname, newname, overwrite=False):
    """Renames ``oldname`` to ``newname``.

    Args:
      oldname: a local path.
      newname: a local path.
      overwrite: replace an existing ``newname``.

    Raises:
      AlreadyExistsError: ``newname`` exists and ``overwrite`` is False.
      NotFoundError: ``oldname`` does not exist.
    """
    _move_or_copy(os.replace, oldname, newname, overwrite)


def Copy(oldpath, newpath, overwrite=False):
    """Copies the file ``oldpath`` to ``newpath``.

    Args:
      oldpath: a local file.
      newpath: a local path.
      overwrite: replace an existing ``newpath``.

    Raises:
      AlreadyExistsError: ``newpath`` exists and ``overwrite`` is False.
      NotFoundError: ``oldpath`` does not exist.
    """
    _move_or_copy(shutil.copyfile, oldpath, newpath, overwrite)


def Walk(top, in_order=True):
    """Yields ``(dirname, subdirectory names, file names)`` for ``top`` and every directory under it.

    Args:
      top: a local directory (nothing is yielded when it does not exist).
      in_order: parents before their children (else children first).
    """
    yield from os.walk(_local(top), topdown=in_order)


def GFile(name, mode="r"):
    """Opens the file ``name``, as TF's ``GFile``: a file object ("r"/"w"/"a", "b" for bytes).

    Args:
      name: a local file.
      mode: the open mode.

    Raises:
      NotFoundError: a file opened for reading does not exist.
    """
    path = _local(name)
    try:
        return open(path, mode)
    except OSError as error:
        raise _os_error(error, path) from None


Open = GFile
