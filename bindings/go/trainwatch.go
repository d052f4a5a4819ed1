// Package trainwatch is the Go binding of trainwatch, TensorFlow 1's MonitoredSession and its hooks
// as a C library.
//
// A session (NewMonitoredTrainingSession, NewMonitoredSession, NewSingularMonitoredSession) runs your
// step function; hooks get callbacks around it. Hooks are Go values implementing Hook (embed BaseHook
// for no-op defaults) or built-in hooks of the library (StopAtStepHook, NanTensorHook,
// CheckpointSaverHook, LoggingTensorHook, StepCounterHook, SummarySaverHook, FeedFnHook, FinalOpsHook,
// GlobalStepWaiterHook, ProfilerHook). Saver, SummaryWriter and EventReader work on their own; a job
// of many processes brings its engine as a Collective.
//
// cgo finds the library with `pkg-config trainwatch`: install libtrainwatch first (README.md). Failures are *Error values carrying the
// library's Status; errors.Is(err, trainwatch.ErrNanLoss) and friends test for a status. An error a
// hook or step returns comes back from Run wrapped (errors.Is/As reach it), and a panic in a hook or
// step never crosses the library's C frames: it is recovered in the trampoline, fails the run, and
// is re-raised by Run once the C call has returned.
//
// Memory the library keeps pointing at (variables, feeds) lives in C memory: Tensor. Views handed to
// callbacks (results, feeds, variables) are zero copy and valid until the callback returns.
//
// Thread rules: a Session and the hooks in it are used by one goroutine at a time.
package trainwatch

/*
#cgo pkg-config: trainwatch
#cgo CFLAGS: -DTW_EXPERIMENTAL_API
#include "glue.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// HeaderVersionNumber is TW_VERSION_NUMBER of the header this package was compiled against.
const HeaderVersionNumber = C.TW_VERSION_NUMBER

// Version returns the version of the library actually loaded: its number (MAJOR*10000 +
// MINOR*100 + PATCH) and "MAJOR.MINOR.PATCH".
func Version() (uint, string) {
	return uint(C.tw_version_number()), C.GoString(C.tw_version_string())
}

// CheckVersion fails when the loaded library has another ABI major than the header, or is older.
func CheckVersion() error {
	number, text := Version()
	if number/10000 != HeaderVersionNumber/10000 || number < HeaderVersionNumber {
		return &Error{Status: FailedPrecondition,
			Message: fmt.Sprintf("libtrainwatch is %d (%s), this package was built against %d", number, text, HeaderVersionNumber)}
	}
	return nil
}

// Status is a tw_status code; values 1-16 are TensorFlow's canonical codes.
type Status int32

// The status codes of include/trainwatch/common.h.
const (
	OK                 Status = C.TW_OK
	Cancelled          Status = C.TW_CANCELLED
	Unknown            Status = C.TW_UNKNOWN
	InvalidArgument    Status = C.TW_INVALID_ARGUMENT
	DeadlineExceeded   Status = C.TW_DEADLINE_EXCEEDED
	NotFound           Status = C.TW_NOT_FOUND
	AlreadyExists      Status = C.TW_ALREADY_EXISTS
	PermissionDenied   Status = C.TW_PERMISSION_DENIED
	ResourceExhausted  Status = C.TW_RESOURCE_EXHAUSTED
	FailedPrecondition Status = C.TW_FAILED_PRECONDITION
	Aborted            Status = C.TW_ABORTED
	OutOfRange         Status = C.TW_OUT_OF_RANGE
	Unimplemented      Status = C.TW_UNIMPLEMENTED
	Internal           Status = C.TW_INTERNAL
	Unavailable        Status = C.TW_UNAVAILABLE
	DataLoss           Status = C.TW_DATA_LOSS
	Unauthenticated    Status = C.TW_UNAUTHENTICATED
	NanLoss            Status = C.TW_NAN_LOSS
	IO                 Status = C.TW_IO
	StopIteration      Status = C.TW_STOP_ITERATION
	CallbackFailed     Status = C.TW_CALLBACK_FAILED
)

// String is the library's name of the status: "TW_NAN_LOSS".
func (s Status) String() string { return C.GoString(C.tw_status_name(C.tw_status(s))) }

// Error is a failure reported by the library: a status, its message, and — when a hook or step
// caused it — the error that hook or step returned (Unwrap gives it).
type Error struct {
	Status  Status
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Status.String()
	}
	return e.Status.String() + ": " + e.Message
}

// Unwrap returns the hook's or step's own error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is a status sentinel (an *Error with only a Status) of the same status,
// so that errors.Is(err, ErrNanLoss) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Status == e.Status
}

// Sentinels for errors.Is, and for steps and hooks to return: a step returning ErrOutOfRange ends
// training cleanly.
var (
	ErrInvalidArgument    = &Error{Status: InvalidArgument}
	ErrNotFound           = &Error{Status: NotFound}
	ErrFailedPrecondition = &Error{Status: FailedPrecondition}
	ErrAborted            = &Error{Status: Aborted}
	ErrOutOfRange         = &Error{Status: OutOfRange}
	ErrUnavailable        = &Error{Status: Unavailable}
	ErrDataLoss           = &Error{Status: DataLoss}
	ErrNanLoss            = &Error{Status: NanLoss}
	ErrStopIteration      = &Error{Status: StopIteration}
	ErrCallbackFailed     = &Error{Status: CallbackFailed}
)

// NewError returns an error with a status, for hooks and steps to fail a run with a specific code.
func NewError(status Status, message string) error { return &Error{Status: status, Message: message} }

// StatusOf is OK for nil, the status of an *Error in err's chain, or Unknown.
func StatusOf(err error) Status {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return Unknown
}

// IsCleanEnd reports whether err ends training without failing it (OutOfRange, StopIteration).
func IsCleanEnd(err error) bool {
	s := StatusOf(err)
	return s == OutOfRange || s == StopIteration
}

func invalid(format string, args ...any) error {
	return &Error{Status: InvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// cString is a C copy of s; an interior NUL is an InvalidArgument naming what.
func cString(what, s string) (*C.char, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return nil, invalid("%s contains a NUL byte", what)
		}
	}
	return C.CString(s), nil
}

// LogLevel filters the library's log lines (Python logging's numbers).
type LogLevel int32

const (
	LogDebug   LogLevel = C.TW_LOG_DEBUG
	LogInfo    LogLevel = C.TW_LOG_INFO
	LogWarning LogLevel = C.TW_LOG_WARNING
	LogError   LogLevel = C.TW_LOG_ERROR
)

// SetLogLevel drops library log lines below level (default LogInfo; they go to stderr).
func SetLogLevel(level LogLevel) { C.tw_set_log_level(C.tw_log_level(level)) }

// LatestCheckpoint is tf.train.latest_checkpoint(dir): the newest checkpoint listed in dir's state
// file, or "" when there is none.
func LatestCheckpoint(dir string) (string, error) {
	cdir, err := cString("dir", dir)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(cdir))
	for size := 4096; ; size *= 4 {
		buf := (*C.char)(C.malloc(C.size_t(size)))
		err := check(func() C.tw_status { return C.tw_latest_checkpoint(buf, C.size_t(size), cdir) })
		path := ""
		if err == nil {
			path = C.GoString(buf)
		}
		C.free(unsafe.Pointer(buf))
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, ErrNotFound):
			return "", nil
		case errors.Is(err, &Error{Status: OutOfRange}) && size < 1<<20:
			continue
		default:
			return "", err
		}
	}
}
