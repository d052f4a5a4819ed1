package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Saver is tf.train.Saver over a set of variables (Tensors, borrowed: they stay allocated while the
// saver lives). Close frees it and releases its directory locks.
type Saver struct {
	c         *C.tw_saver
	variables heldTensors
}

// SaverOption configures a Saver (TF's Saver arguments).
type SaverOption func(*Saver) error

// MaxToKeep keeps the n most recent checkpoints (default 5; 0 keeps every file).
func MaxToKeep(n int64) SaverOption {
	return func(s *Saver) error {
		return check(func() C.tw_status { return C.tw_saver_set_max_to_keep(s.c, C.int64_t(n)) })
	}
}

// KeepCheckpointEveryNHours keeps one checkpoint forever per that many hours (default 10000).
func KeepCheckpointEveryNHours(hours float64) SaverOption {
	return func(s *Saver) error {
		return check(func() C.tw_status { return C.tw_saver_set_keep_checkpoint_every_n_hours(s.c, C.double(hours)) })
	}
}

// PadStepNumber names checkpoints "<prefix>-%08d" (TF's pad_step_number).
func PadStepNumber() SaverOption {
	return func(s *Saver) error {
		return check(func() C.tw_status { return C.tw_saver_set_pad_step_number(s.c, 1) })
	}
}

// RecycleFiles overwrites evicted checkpoints' files in place instead of unlinking them.
func RecycleFiles() SaverOption {
	return func(s *Saver) error { return check(func() C.tw_status { return C.tw_saver_set_recycle_files(s.c, 1) }) }
}

// NewSaver is tf.train.Saver(var_list) over variables (unique names, any dtype and shape).
func NewSaver(variables []*Tensor, options ...SaverOption) (*Saver, error) {
	raw := (*C.tw_tensor)(C.calloc(C.size_t(len(variables)+1), C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	defer C.free(unsafe.Pointer(raw))
	views := unsafe.Slice(raw, len(variables)+1)
	for i, t := range variables {
		if !t.live() {
			return nil, invalid("variable %d is nil or freed", i)
		}
		views[i] = t.raw()
	}
	s := &Saver{}
	var ptr *C.tw_tensor
	if len(variables) > 0 {
		ptr = raw
	}
	if err := check(func() C.tw_status { return C.tw_saver_create(&s.c, ptr, C.size_t(len(variables))) }); err != nil {
		return nil, err
	}
	return s.adopt(variables, options)
}

// NewSaverFromOptions is the saver a session created from opts would hold (its variables and
// shards, its collective and retention options), for one rank of a job: see trainwatch/distributed.h.
func NewSaverFromOptions(opts *Options, options ...SaverOption) (*Saver, error) {
	if err := opts.live(); err != nil {
		return nil, err
	}
	s := &Saver{}
	if err := check(func() C.tw_status { return C.tw_saver_create_from_options(&s.c, opts.c) }); err != nil {
		return nil, err
	}
	return s.adopt(opts.variables, options)
}

func (s *Saver) adopt(variables []*Tensor, options []SaverOption) (*Saver, error) {
	s.variables.add(variables...)
	runtime.SetFinalizer(s, (*Saver).Close)
	for _, option := range options {
		if err := option(s); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close frees the saver and releases its directory locks; closing twice is a no-op.
func (s *Saver) Close() {
	if s == nil || s.c == nil {
		return
	}
	C.tw_saver_destroy(s.c)
	s.c = nil
	s.variables.release()
	runtime.SetFinalizer(s, nil)
}

func (s *Saver) live() error {
	if s == nil || s.c == nil {
		return &Error{Status: FailedPrecondition, Message: "saver is closed"}
	}
	return nil
}

// Save writes "<prefix>-<globalStep>" (prefix itself with Unset), records it in the directory's
// state file and deletes checkpoints past MaxToKeep. It returns the checkpoint's path ("" for a saver
// without variables).
func (s *Saver) Save(prefix string, globalStep int64) (string, error) {
	if err := s.live(); err != nil {
		return "", err
	}
	cprefix, err := cString("prefix", prefix)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(cprefix))
	var out *C.char
	if err := check(func() C.tw_status { return C.tw_saver_save(&out, s.c, cprefix, C.int64_t(globalStep)) }); err != nil {
		return "", err
	}
	return C.GoString(out), nil
}

// Restore restores every variable from the checkpoint at path, in place, all or nothing. With names,
// only those variables.
func (s *Saver) Restore(path string, names ...string) error {
	if err := s.live(); err != nil {
		return err
	}
	cpath, err := cString("path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	if names == nil {
		return check(func() C.tw_status { return C.tw_saver_restore(s.c, cpath) })
	}
	cnames, err := newCStrings("variable name", names)
	if err != nil {
		return err
	}
	defer cnames.free()
	return check(func() C.tw_status { return C.tw_saver_restore_variables(s.c, cpath, cnames.ptr, C.size_t(cnames.n)) })
}

// RestoreNewestGood restores from the newest intact checkpoint of dir, skipping damaged ones (with a
// warning), and returns its path.
func (s *Saver) RestoreNewestGood(dir string) (string, error) {
	if err := s.live(); err != nil {
		return "", err
	}
	cdir, err := cString("dir", dir)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(cdir))
	var out *C.char
	if err := check(func() C.tw_status { return C.tw_saver_restore_newest_good(&out, s.c, cdir) }); err != nil {
		return "", err
	}
	return C.GoString(out), nil
}

// RecoverLastCheckpoints re-seeds the kept list and retention clock from dir's state file (TF's
// recover_last_checkpoints), taking dir's lock.
func (s *Saver) RecoverLastCheckpoints(dir string) error {
	if err := s.live(); err != nil {
		return err
	}
	cdir, err := cString("dir", dir)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cdir))
	return check(func() C.tw_status { return C.tw_saver_recover_last_checkpoints(s.c, cdir) })
}

// LastCheckpoints are the kept checkpoints, oldest first (TF's last_checkpoints).
func (s *Saver) LastCheckpoints() ([]string, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return collect(C.tw_saver_last_checkpoint_count(s.c), func(i C.size_t, path **C.char) C.tw_status {
		return C.tw_saver_last_checkpoint_at(path, s.c, i)
	}, goString)
}

// VariableInfo is one tensor of a checkpoint: its name, dtype and shape.
type VariableInfo struct {
	Name  string
	DType DType
	Shape []int64
}

// ListVariables is tf.train.list_variables(path): the checkpoint's tensors in save order.
func ListVariables(path string) ([]VariableInfo, error) {
	cpath, err := cString("path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	var list *C.tw_checkpoint_variables
	if err := check(func() C.tw_status { return C.tw_checkpoint_list_variables(&list, cpath) }); err != nil {
		return nil, err
	}
	defer C.tw_checkpoint_variables_destroy(list)
	return collect(C.tw_checkpoint_variables_count(list), func(i C.size_t, t *C.tw_tensor) C.tw_status {
		C.tw_tensor_init(t)
		return C.tw_checkpoint_variables_at(t, list, i)
	}, func(t *C.tw_tensor) VariableInfo {
		v := viewOf(t)
		return VariableInfo{Name: v.Name, DType: v.DType, Shape: v.Shape}
	})
}

// MaxLoadBytes bounds LoadVariable's allocation (a small file can declare gigabytes of zeros), as the
// Python package's TRAINWATCH_MAX_LOAD_BYTES default does; LoadVariableInto takes the caller's buffer.
var MaxLoadBytes int64 = 1 << 30

// LoadVariable is tf.train.load_variable(path, name): a new Tensor holding the checkpoint's tensor.
func LoadVariable(path, name string) (*Tensor, error) {
	infos, err := ListVariables(path)
	if err != nil {
		return nil, err
	}
	for _, info := range infos {
		if info.Name != name {
			continue
		}
		n, err := elementCount(info.Shape)
		if err != nil {
			return nil, err
		}
		if size := int64(n) * int64(info.DType.Size()); size > MaxLoadBytes {
			return nil, &Error{Status: ResourceExhausted,
				Message: fmt.Sprintf("tensor '%s' of %s declares %d bytes, over MaxLoadBytes (%d)", name, path, size, MaxLoadBytes)}
		}
		t, err := NewTensor(name, info.DType, info.Shape...)
		if err != nil {
			return nil, err
		}
		if err := LoadVariableInto(path, t); err != nil {
			t.Free()
			return nil, err
		}
		return t, nil
	}
	return nil, &Error{Status: NotFound, Message: fmt.Sprintf("Key %s not found in checkpoint %s", name, path)}
}

// LoadVariableInto reads the tensor named t.Name() into t, which must have its dtype and shape.
func LoadVariableInto(path string, t *Tensor) error {
	if !t.live() {
		return invalid("tensor is nil or freed")
	}
	cpath, err := cString("path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	raw := (*C.tw_tensor)(C.malloc(C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	defer C.free(unsafe.Pointer(raw))
	*raw = t.raw()
	return check(func() C.tw_status { return C.tw_checkpoint_load_variable(cpath, raw) })
}

// VerifyCheckpoint decodes every tensor of the checkpoint at path and checks every checksum.
func VerifyCheckpoint(path string) error {
	cpath, err := cString("path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	return check(func() C.tw_status { return C.tw_checkpoint_verify(cpath) })
}

// UpgradeCheckpoint rewrites the checkpoint at from in the current format at to (trainwatch-ckpt upgrade).
func UpgradeCheckpoint(from, to string) error {
	cfrom, err := cString("from", from)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cfrom))
	cto, err := cString("to", to)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cto))
	return check(func() C.tw_status { return C.tw_checkpoint_upgrade(cfrom, cto) })
}

// ProgressKind says what a Progress report is about.
type ProgressKind int32

const (
	ProgressSave    ProgressKind = C.TW_PROGRESS_SAVE
	ProgressRestore ProgressKind = C.TW_PROGRESS_RESTORE
)

// Progress is one report on a long save or restore.
type Progress struct {
	Kind                  ProgressKind
	Path                  string
	BytesDone, BytesTotal int64
	ElapsedSecs           float64
	Finished              bool
}

var progressHandle C.uintptr_t

// SetProgressSink sends the progress of this process's saves and restores to fn every everyNSecs
// (0: after every chunk) and once at the end; nil restores the default (INFO log lines). fn is called
// from the library's threads, possibly at once: it must be safe for concurrent use.
func SetProgressSink(everyNSecs float64, fn func(Progress)) error {
	var handle C.uintptr_t
	if fn != nil {
		handle = C.uintptr_t(handleOf(fn))
	}
	if err := check(func() C.tw_status { return C.twgo_set_progress_sink(C.double(everyNSecs), handle) }); err != nil {
		if handle != 0 {
			twgoRelease(handle)
		}
		return err
	}
	// Operations that began under the old sink keep it: its handle is never released.
	progressHandle = handle
	return nil
}

//export twgoProgress
func twgoProgress(handle C.uintptr_t, kind C.int32_t, path *C.char, done, total C.int64_t, elapsed C.double, finished C.int) {
	fn := valueOf[func(Progress)](handle)
	report := Progress{Kind: ProgressKind(kind), Path: C.GoString(path), BytesDone: int64(done), BytesTotal: int64(total),
		ElapsedSecs: float64(elapsed), Finished: finished != 0}
	guardVoid(func() { fn(report) })
}

var logHandle C.uintptr_t

// SetLogSink sends every log line of the library to fn (nil: back to stderr). fn may be called from
// any thread that runs library code: it must be safe for concurrent use.
func SetLogSink(fn func(level LogLevel, message string)) {
	var handle C.uintptr_t
	if fn != nil {
		handle = C.uintptr_t(handleOf(fn))
	}
	C.twgo_set_log_sink(handle)
	// A line being logged on another thread may still hold the old sink: its handle is never released.
	logHandle = handle
}

//export twgoLog
func twgoLog(handle C.uintptr_t, level C.int32_t, message *C.char) {
	fn := valueOf[func(LogLevel, string)](handle)
	text := C.GoString(message)
	guardVoid(func() { fn(LogLevel(level), text) })
}
