package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"syscall"
	"unsafe"
)

// A callFrame is one library call in progress on one OS thread. Go callbacks the library makes on that
// thread (hooks, steps, listeners, a collective, …) report to it: the first error one returned, to be
// attached to the call's *Error, and the first panic, to be re-raised once C has returned — a panic must
// never unwind through C frames.
type callFrame struct {
	cause    error
	panicked bool
	panicVal any
}

// frames holds the calls in progress per OS thread: a callback runs on the thread (and goroutine) that
// made the C call, so the thread id finds its frame. Nested calls (a hook calling the library) stack.
var frames = struct {
	sync.Mutex
	byThread map[int][]*callFrame
}{byThread: map[int][]*callFrame{}}

func pushFrame(tid int, f *callFrame) {
	frames.Lock()
	frames.byThread[tid] = append(frames.byThread[tid], f)
	frames.Unlock()
}

func popFrame(tid int) {
	frames.Lock()
	stack := frames.byThread[tid]
	if len(stack) <= 1 {
		delete(frames.byThread, tid)
	} else {
		frames.byThread[tid] = stack[:len(stack)-1]
	}
	frames.Unlock()
}

// currentFrame is the innermost call of this thread, nil on a thread of the library's own (a background
// save, a compression worker): a callback there has no Go caller to hand a panic to.
func currentFrame() *callFrame {
	tid := syscall.Gettid()
	frames.Lock()
	defer frames.Unlock()
	stack := frames.byThread[tid]
	if len(stack) == 0 {
		return nil
	}
	return stack[len(stack)-1]
}

// check makes C calls and turns a failing status into an *Error. The thread is locked so that the
// thread-local message is read on the thread that failed, and so that callbacks find the call's frame.
// A panic recovered in a callback is re-raised here; an error a callback returned is the *Error's Unwrap.
func check(f func() C.tw_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := syscall.Gettid()
	frame := &callFrame{}
	pushFrame(tid, frame)
	st := f()
	var err *Error
	if st != C.TW_OK {
		err = &Error{Status: Status(st), Message: C.GoString(C.tw_last_error_message())}
	}
	popFrame(tid)
	if frame.panicked {
		panic(frame.panicVal)
	}
	if err == nil {
		return nil
	}
	if frame.cause != nil && (StatusOf(frame.cause) == err.Status || err.Status == CallbackFailed) {
		err.Err = frame.cause
	}
	return err
}

// guard runs a Go callback for C: an error becomes its status (CallbackFailed for an error without
// one) and the library's message; a panic is recovered and kept for check to re-raise.
func guard(body func() error) (status C.tw_status) {
	frame := currentFrame()
	defer func() {
		if r := recover(); r != nil {
			if frame != nil && !frame.panicked {
				frame.panicked, frame.panicVal = true, r
			}
			status = setError(CallbackFailed, fmt.Sprintf("panic: %v", r))
		}
	}()
	err := body()
	if err == nil {
		return C.TW_OK
	}
	if frame != nil && frame.cause == nil {
		frame.cause = err
	}
	if e, ok := err.(*Error); ok && e.Status != OK {
		return setError(e.Status, e.Message)
	}
	if st := StatusOf(err); st != Unknown && st != OK {
		return setError(st, err.Error())
	}
	return setError(CallbackFailed, err.Error())
}

// guardVoid runs a callback that cannot report a status (a log or progress sink): a panic is kept for
// the Go caller when there is one, dropped otherwise.
func guardVoid(body func()) {
	_ = guard(func() error { body(); return nil })
}

func setError(status Status, message string) C.tw_status {
	cmessage := C.CString(message)
	defer C.free(unsafe.Pointer(cmessage))
	return C.tw_set_error(C.tw_status(status), cmessage)
}

// handleOf is the user_data the library passes back to the glue's trampolines: a cgo.Handle, since C
// may not keep Go pointers. The library releases it through twgoRelease (every destroy slot), or
// the caller does with Delete when the library did not take it.
func handleOf(value any) cgo.Handle { return cgo.NewHandle(value) }

func valueOf[T any](handle C.uintptr_t) T { return cgo.Handle(handle).Value().(T) }

//export twgoRelease
func twgoRelease(handle C.uintptr_t) { cgo.Handle(handle).Delete() }
