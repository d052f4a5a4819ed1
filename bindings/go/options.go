package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Option is a tw_option key. Each has one type (in its comment); the setter of another type fails
// with InvalidArgument.
type Option int32

const (
	OptIsChief                   Option = C.TW_OPT_IS_CHIEF                      // int64 0/1, default 1
	OptCheckpointDir             Option = C.TW_OPT_CHECKPOINT_DIR                // string: where the chief restores from
	OptMaxRecoveryAttempts       Option = C.TW_OPT_MAX_RECOVERY_ATTEMPTS         // int64, default 10, -1 unlimited
	OptRecoveryBackoffSecs       Option = C.TW_OPT_RECOVERY_BACKOFF_SECS         // float64, default 1
	OptRecoveryBackoffMaxSecs    Option = C.TW_OPT_RECOVERY_BACKOFF_MAX_SECS     // float64, default 60
	OptRecoveryWaitSecs          Option = C.TW_OPT_RECOVERY_WAIT_SECS            // float64, default 30
	OptMaxWaitSecs               Option = C.TW_OPT_MAX_WAIT_SECS                 // float64, default 1800
	OptAutoIncrementGlobalStep   Option = C.TW_OPT_AUTO_INCREMENT_GLOBAL_STEP    // int64 0/1, default 1
	OptInitialGlobalStep         Option = C.TW_OPT_INITIAL_GLOBAL_STEP           // int64, default 0
	OptCheckNumerics             Option = C.TW_OPT_CHECK_NUMERICS                // int64 0/1, default 0
	OptMaxToKeep                 Option = C.TW_OPT_MAX_TO_KEEP                   // int64, default 5
	OptKeepCheckpointEveryNHours Option = C.TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS // float64, default 10000
	OptCheckpointEveryNSecs      Option = C.TW_OPT_CHECKPOINT_EVERY_N_SECS       // float64, MonitoredTrainingSession's
	OptCheckpointEveryNSteps     Option = C.TW_OPT_CHECKPOINT_EVERY_N_STEPS      // int64, MonitoredTrainingSession's
	OptCheckpointBasename        Option = C.TW_OPT_CHECKPOINT_BASENAME           // string, default "model.ckpt"
	OptAsyncCheckpoint           Option = C.TW_OPT_ASYNC_CHECKPOINT              // int64 0/1, default 1
	OptCheckpointRecycleFiles    Option = C.TW_OPT_CHECKPOINT_RECYCLE_FILES      // int64 0/1, default 0
	OptNanAction                 Option = C.TW_OPT_NAN_ACTION                    // int64, default 0 (fail)
	OptNanDetectInf              Option = C.TW_OPT_NAN_DETECT_INF                // int64 0/1, default 1
	OptNanEveryNSteps            Option = C.TW_OPT_NAN_EVERY_N_STEPS             // int64, default 1
	OptNanMaxRollbacks           Option = C.TW_OPT_NAN_MAX_ROLLBACKS             // int64, default 3
	OptEveryNSteps               Option = C.TW_OPT_EVERY_N_STEPS                 // int64, a periodic hook's period
	OptEveryNSecs                Option = C.TW_OPT_EVERY_N_SECS                  // float64 seconds, the same
)

// Options configure sessions (and CheckpointSaverHook) and register the variables sessions train,
// save and restore in place. Close frees them; sessions made from them are not affected.
type Options struct {
	c         *C.tw_options
	variables []*Tensor
}

// NewOptions has every default (TF's).
func NewOptions() (*Options, error) {
	o := &Options{}
	if err := check(func() C.tw_status { return C.tw_options_create(&o.c) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(o, (*Options).Close)
	return o, nil
}

func (o *Options) live() error {
	if o == nil || o.c == nil {
		return &Error{Status: FailedPrecondition, Message: "options are closed"}
	}
	return nil
}

// Close frees the options; closing twice is a no-op.
func (o *Options) Close() {
	if o == nil || o.c == nil {
		return
	}
	C.tw_options_destroy(o.c)
	o.c = nil
	for _, v := range o.variables {
		v.c.users--
	}
	o.variables = nil
	runtime.SetFinalizer(o, nil)
}

func (o *Options) set(f func() C.tw_status) error {
	if err := o.live(); err != nil {
		return err
	}
	return check(f)
}

func (o *Options) SetInt64(key Option, value int64) error {
	return o.set(func() C.tw_status { return C.tw_options_set_int64(o.c, C.tw_option(key), C.int64_t(value)) })
}

// SetBool sets a 0/1 option.
func (o *Options) SetBool(key Option, value bool) error {
	var v int64
	if value {
		v = 1
	}
	return o.SetInt64(key, v)
}

func (o *Options) SetFloat64(key Option, value float64) error {
	return o.set(func() C.tw_status { return C.tw_options_set_double(o.c, C.tw_option(key), C.double(value)) })
}

func (o *Options) SetString(key Option, value string) error {
	cvalue, err := cString("option value", value)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cvalue))
	return o.set(func() C.tw_status { return C.tw_options_set_string(o.c, C.tw_option(key), cvalue) })
}

// SetNone sets the option to TF's None.
func (o *Options) SetNone(key Option) error {
	return o.set(func() C.tw_status { return C.tw_options_set_none(o.c, C.tw_option(key)) })
}

func (o *Options) Int64(key Option) (int64, error) {
	var out C.int64_t
	err := o.set(func() C.tw_status { return C.tw_options_get_int64(&out, o.c, C.tw_option(key)) })
	return int64(out), err
}

func (o *Options) Float64(key Option) (float64, error) {
	var out C.double
	err := o.set(func() C.tw_status { return C.tw_options_get_double(&out, o.c, C.tw_option(key)) })
	return float64(out), err
}

// String returns a string option, "" when unset.
func (o *Options) String(key Option) (string, error) {
	var out *C.char
	err := o.set(func() C.tw_status { return C.tw_options_get_string(&out, o.c, C.tw_option(key)) })
	if err != nil || out == nil {
		return "", err
	}
	return C.GoString(out), nil
}

// AddVariable registers t as a variable: hooks can fetch it by name, checkpoints save it, and a
// restore writes into it in place. t stays allocated while these options or a session made from
// them hold it.
func (o *Options) AddVariable(t *Tensor) error {
	if !t.live() {
		return invalid("variable is nil or freed")
	}
	raw := t.raw()
	if err := o.set(func() C.tw_status { return C.tw_options_add_variable(o.c, &raw) }); err != nil {
		return err
	}
	t.c.users++
	o.variables = append(o.variables, t)
	return nil
}
