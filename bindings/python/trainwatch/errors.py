"""TensorFlow's error classes (tf.errors), one per trainwatch status code.

Every failing library call raises the class of its status: ``OutOfRangeError`` for TW_OUT_OF_RANGE,
``AbortedError`` for TW_ABORTED, … The other direction works too: a step function or hook that raises
``AbortedError`` makes the run recoverable, ``OutOfRangeError``/``StopIteration`` end the input cleanly.

Where TF raised a Python built-in for API misuse, the class also derives from it, so code written
against TF keeps catching what it caught: ``InvalidArgumentError`` is a ``ValueError`` (bad
constructor arguments), ``FailedPreconditionError`` a ``RuntimeError`` ("Session is closed."), a feed
conflict a ``RuntimeError``, and ``NanLossDuringTrainingError`` a ``RuntimeError``.
"""
# The built-in bases: feed conflicts H22/H23, NanLossDuringTrainingError B33.
from . import native


class OpError(Exception):
    """A failing trainwatch status. Built like TF's ``OpError(node_def, op, message)``, or from a
    message alone: ``AbortedError("preempted")``."""

    error_code = native.TW_UNKNOWN

    def __init__(self, node_def=None, op=None, message=None, error_code=None):
        """Creates an error, as TF's ``OpError(node_def, op, message)`` or from a message alone.

        Args:
          node_def: accepted for TF code (there are no graph nodes); a str here is the message.
          op: accepted for TF code.
          message: the error's text.
          error_code: the status code, when it differs from the class's.
        """
        if message is None and op is None and isinstance(node_def, str):
            node_def, message = None, node_def
        self.node_def = node_def
        self.op = op
        self.message = message if message is not None else ""
        if error_code is not None:
            self.error_code = error_code
        super().__init__(self.message)

    def __reduce__(self):
        return (type(self), (self.node_def, self.op, self.message))


def _error_class(name, code, *builtins, doc):
    return type(name, (OpError, *builtins), {"error_code": code, "__doc__": doc, "__module__": __name__})


CancelledError = _error_class("CancelledError", native.TW_CANCELLED, doc="The operation was cancelled.")
UnknownError = _error_class("UnknownError", native.TW_UNKNOWN, doc="An unknown error.")
InvalidArgumentError = _error_class("InvalidArgumentError", native.TW_INVALID_ARGUMENT, ValueError,
                                    doc="A malformed argument, or a NaN/Inf found by check_numerics.")
DeadlineExceededError = _error_class("DeadlineExceededError", native.TW_DEADLINE_EXCEEDED,
                                     doc="A bounded wait ran out (a worker waiting for the chief).")
NotFoundError = _error_class("NotFoundError", native.TW_NOT_FOUND, doc="A name or file does not exist.")
AlreadyExistsError = _error_class("AlreadyExistsError", native.TW_ALREADY_EXISTS, doc="The name is taken.")
PermissionDeniedError = _error_class("PermissionDeniedError", native.TW_PERMISSION_DENIED, doc="Not allowed.")
ResourceExhaustedError = _error_class("ResourceExhaustedError", native.TW_RESOURCE_EXHAUSTED,
                                      doc="Out of memory or disk space.")
FailedPreconditionError = _error_class("FailedPreconditionError", native.TW_FAILED_PRECONDITION, RuntimeError,
                                       doc="The object is in the wrong state (closed, stopped, failed).")
AbortedError = _error_class("AbortedError", native.TW_ABORTED,
                            doc="Preemption: a MonitoredSession recovers from it.")
OutOfRangeError = _error_class("OutOfRangeError", native.TW_OUT_OF_RANGE, doc="End of input: a clean end.")
UnimplementedError = _error_class("UnimplementedError", native.TW_UNIMPLEMENTED, doc="Not implemented.")
InternalError = _error_class("InternalError", native.TW_INTERNAL, doc="A bug in trainwatch; please report it.")
UnavailableError = _error_class("UnavailableError", native.TW_UNAVAILABLE,
                                doc="Transient unavailability: a MonitoredSession recovers from it.")
DataLossError = _error_class("DataLossError", native.TW_DATA_LOSS, doc="Corrupt or truncated data.")
UnauthenticatedError = _error_class("UnauthenticatedError", native.TW_UNAUTHENTICATED, doc="Not authenticated.")
NanLossDuringTrainingError = _error_class("NanLossDuringTrainingError", native.TW_NAN_LOSS, RuntimeError,
                                          doc="A watched value was NaN (or Inf): TF's NanTensorHook error.")
IOFailureError = _error_class("IOFailureError", native.TW_IO, doc="An operating-system I/O call failed.")
CallbackFailedError = _error_class("CallbackFailedError", native.TW_CALLBACK_FAILED,
                                   doc="A callback failed without a Python exception to re-raise.")
FeedConflictError = type("FeedConflictError", (InvalidArgumentError, RuntimeError), {
    "__doc__": "Two hooks, or a hook and the caller, fed the same name (TF's RuntimeError).",
    "__module__": __name__})

_CLASS_OF_CODE = {cls.error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError, DataLossError,
    UnauthenticatedError, NanLossDuringTrainingError, IOFailureError, CallbackFailedError)}

_FEED_CONFLICT = "Same tensor is fed by"


def error_from_status(code, message):
    """The exception a failing status raises in Python (what the native module calls)."""
    if code == native.TW_STOP_ITERATION:
        return StopIteration(message)
    if code == native.TW_INVALID_ARGUMENT and _FEED_CONFLICT in message:
        return FeedConflictError(message)
    cls = _CLASS_OF_CODE.get(code)
    return cls(message) if cls is not None else OpError(None, None, message, code)


native.set_error_factory(error_from_status)
