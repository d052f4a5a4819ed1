package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// CheckpointListener is TF's CheckpointSaverListener: it hears every save of the CheckpointSaverHooks
// it is given to. Embed BaseCheckpointListener to write only the methods you need. AfterSave returning
// stop true ends training after that run (ignored for the saves at creation and at end, as in TF). An
// error fails the operation the save runs in; panics are handled as for Hook.
type CheckpointListener interface {
	Begin() error
	BeforeSave(s *SessionRef, globalStep int64) error
	AfterSave(s *SessionRef, globalStep int64) (stop bool, err error)
	End(s *SessionRef, globalStep int64) error
}

// BaseCheckpointListener implements every CheckpointListener method as a no-op.
type BaseCheckpointListener struct{}

func (BaseCheckpointListener) Begin() error                               { return nil }
func (BaseCheckpointListener) BeforeSave(*SessionRef, int64) error        { return nil }
func (BaseCheckpointListener) AfterSave(*SessionRef, int64) (bool, error) { return false, nil }
func (BaseCheckpointListener) End(*SessionRef, int64) error               { return nil }

func newCListener(l CheckpointListener) (*C.tw_checkpoint_listener, error) {
	name := fmt.Sprintf("%T", l)
	if named, ok := l.(Named); ok && named.Name() != "" {
		name = named.Name()
	}
	cname, err := cString("listener name", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	handle := handleOf(l)
	var out *C.tw_checkpoint_listener
	if err := check(func() C.tw_status { return C.twgo_checkpoint_listener_create(&out, cname, C.uintptr_t(handle)) }); err != nil {
		handle.Delete()
		return nil, err
	}
	return out, nil
}

//export twgoListenerCall
func twgoListenerCall(handle C.uintptr_t, phase C.int, cs *C.tw_session, step C.int64_t, stop *C.int) C.tw_status {
	l := valueOf[CheckpointListener](handle)
	return guard(func() error {
		if phase == 0 {
			return l.Begin()
		}
		return withSession(cs, func(s *SessionRef) error {
			switch phase {
			case 1:
				return l.BeforeSave(s, int64(step))
			case 2:
				requested, err := l.AfterSave(s, int64(step))
				if requested {
					*stop = 1
				}
				return err
			default:
				return l.End(s, int64(step))
			}
		})
	})
}
