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
	OptIsChief                     Option = C.TW_OPT_IS_CHIEF                      // int64 0/1, default 1
	OptCheckpointDir               Option = C.TW_OPT_CHECKPOINT_DIR                // string: where the chief restores from
	OptMaxRecoveryAttempts         Option = C.TW_OPT_MAX_RECOVERY_ATTEMPTS         // int64, default 10, -1 unlimited
	OptRecoveryBackoffSecs         Option = C.TW_OPT_RECOVERY_BACKOFF_SECS         // float64, default 1
	OptRecoveryBackoffMaxSecs      Option = C.TW_OPT_RECOVERY_BACKOFF_MAX_SECS     // float64, default 60
	OptRecoveryWaitSecs            Option = C.TW_OPT_RECOVERY_WAIT_SECS            // float64, default 30
	OptMaxWaitSecs                 Option = C.TW_OPT_MAX_WAIT_SECS                 // float64, default 1800
	OptAutoIncrementGlobalStep     Option = C.TW_OPT_AUTO_INCREMENT_GLOBAL_STEP    // int64 0/1, default 1
	OptInitialGlobalStep           Option = C.TW_OPT_INITIAL_GLOBAL_STEP           // int64, default 0
	OptCheckNumerics               Option = C.TW_OPT_CHECK_NUMERICS                // int64 0/1, default 0
	OptMaxToKeep                   Option = C.TW_OPT_MAX_TO_KEEP                   // int64, default 5
	OptKeepCheckpointEveryNHours   Option = C.TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS // float64, default 10000
	OptCheckpointEveryNSecs        Option = C.TW_OPT_CHECKPOINT_EVERY_N_SECS       // float64, MonitoredTrainingSession's
	OptCheckpointEveryNSteps       Option = C.TW_OPT_CHECKPOINT_EVERY_N_STEPS      // int64, MonitoredTrainingSession's
	OptCheckpointBasename          Option = C.TW_OPT_CHECKPOINT_BASENAME           // string, default "model.ckpt"
	OptAsyncCheckpoint             Option = C.TW_OPT_ASYNC_CHECKPOINT              // int64 0/1, default 1
	OptCheckpointRecycleFiles      Option = C.TW_OPT_CHECKPOINT_RECYCLE_FILES      // int64 0/1, default 0
	OptNanAction                   Option = C.TW_OPT_NAN_ACTION                    // int64, default 0 (fail)
	OptNanDetectInf                Option = C.TW_OPT_NAN_DETECT_INF                // int64 0/1, default 1
	OptNanEveryNSteps              Option = C.TW_OPT_NAN_EVERY_N_STEPS             // int64, default 1
	OptNanMaxRollbacks             Option = C.TW_OPT_NAN_MAX_ROLLBACKS             // int64, default 3
	OptEveryNSteps                 Option = C.TW_OPT_EVERY_N_STEPS                 // int64, a periodic hook's period
	OptEveryNSecs                  Option = C.TW_OPT_EVERY_N_SECS                  // float64 seconds, the same
	OptSummaryDir                  Option = C.TW_OPT_SUMMARY_DIR                   // string, MonitoredTrainingSession's summary_dir
	OptSummaryEveryNSteps          Option = C.TW_OPT_SUMMARY_EVERY_N_STEPS         // int64, save_summaries_steps
	OptSummaryEveryNSecs           Option = C.TW_OPT_SUMMARY_EVERY_N_SECS          // float64, save_summaries_secs
	OptStepCountEveryNSteps        Option = C.TW_OPT_STEP_COUNT_EVERY_N_STEPS      // int64, log_step_count_steps
	OptDeferredCheckpointListeners Option = C.TW_OPT_DEFERRED_CHECKPOINT_LISTENERS // int64 0/1, default 0
	OptCatchPreemptionSignals      Option = C.TW_OPT_CATCH_PREEMPTION_SIGNALS      // int64 0/1, default 0
	OptOutputDir                   Option = C.TW_OPT_OUTPUT_DIR                    // string, a hook's output_dir
	OptLogAtEnd                    Option = C.TW_OPT_LOG_AT_END                    // int64 0/1, LoggingTensorHook's at_end
	OptLogMaxElements              Option = C.TW_OPT_LOG_MAX_ELEMENTS              // int64, default 32
	OptSummaryHistograms           Option = C.TW_OPT_SUMMARY_HISTOGRAMS            // int64 0/1, default 1
	OptWaitPollSecs                Option = C.TW_OPT_WAIT_POLL_SECS                // float64, GlobalStepWaiterHook's poll
	OptWaitMaxSecs                 Option = C.TW_OPT_WAIT_MAX_SECS                 // float64, its bound (default forever)
	OptSummaryHistogramNames       Option = C.TW_OPT_SUMMARY_HISTOGRAM_NAMES       // string, comma-separated names/patterns
	OptCollectiveTimeoutSecs       Option = C.TW_OPT_COLLECTIVE_TIMEOUT_SECS       // float64, a job's collective timeout
	OptVoteEveryNRuns              Option = C.TW_OPT_VOTE_EVERY_N_RUNS             // int64, a job's vote period
	OptRestoreViaBroadcast         Option = C.TW_OPT_RESTORE_VIA_BROADCAST         // int64 0/1, a job's restore mode
)

// Set sets key from a Go value of its type: int, int64 or bool for int64 options, float64 (or an
// integer) for float64 ones, string for strings, nil for TF's None.
func (o *Options) Set(key Option, value any) error {
	switch v := value.(type) {
	case nil:
		return o.SetNone(key)
	case bool:
		return o.SetBool(key, v)
	case int:
		return o.Set(key, int64(v))
	case int64:
		if info, err := LookupOption(key); err == nil && info.Type == "float64" {
			return o.SetFloat64(key, float64(v))
		}
		return o.SetInt64(key, v)
	case float64:
		return o.SetFloat64(key, v)
	case string:
		return o.SetString(key, v)
	}
	return invalid("option %d: a %T is not an option value", int32(key), value)
}

// OptionState tells whether an option was set, set to None, or left at its default.
type OptionState int32

const (
	OptionDefault OptionState = C.TW_OPTION_DEFAULT
	OptionSet     OptionState = C.TW_OPTION_SET
	OptionNone    OptionState = C.TW_OPTION_NONE
)

// State is whether key was set, set to None or left at its default ("left at the default" and None
// differ for MonitoredTrainingSession's periods, as in TF).
func (o *Options) State(key Option) (OptionState, error) {
	var out C.tw_option_state
	err := o.set(func() C.tw_status { return C.tw_options_get_state(&out, o.c, C.tw_option(key)) })
	return OptionState(out), err
}

// OptionInfo is what the library knows of an option (its table in the library, so that nothing is
// restated here): its name, type, default and bounds.
type OptionInfo struct {
	Key                Option
	Name               string // "TW_OPT_MAX_TO_KEEP"
	Type               string // "int64", "float64" or "string"
	ReadBy             uint32 // TW_OPTION_READ_BY_* bits
	Int64Default       int64
	Int64Min, Int64Max int64
	Float64Default     float64
	Float64Min         float64
	Float64MinExcluded bool
}

// LookupOption finds an option by key (an Option) or by name (a string: "TW_OPT_MAX_TO_KEEP" or
// "max_to_keep", any case); NotFound for an unknown one.
func LookupOption(keyOrName any) (OptionInfo, error) {
	var info C.tw_option_info
	C.tw_option_info_init(&info)
	var err error
	switch k := keyOrName.(type) {
	case Option:
		err = check(func() C.tw_status { return C.tw_option_info_by_key(&info, C.tw_option(k)) })
	case string:
		cname, cerr := cString("option name", k)
		if cerr != nil {
			return OptionInfo{}, cerr
		}
		defer C.free(unsafe.Pointer(cname))
		err = check(func() C.tw_status { return C.tw_option_info_by_name(&info, cname) })
	default:
		return OptionInfo{}, invalid("LookupOption takes an Option or a string, not a %T", keyOrName)
	}
	if err != nil {
		return OptionInfo{}, err
	}
	types := map[C.int32_t]string{C.TW_OPTION_TYPE_INT64: "int64", C.TW_OPTION_TYPE_DOUBLE: "float64", C.TW_OPTION_TYPE_STRING: "string"}
	return OptionInfo{Key: Option(info.key), Name: C.GoString(info.name), Type: types[info._type], ReadBy: uint32(info.read_by),
		Int64Default: int64(info.int64_default), Int64Min: int64(info.int64_min), Int64Max: int64(info.int64_max),
		Float64Default: float64(info.double_default), Float64Min: float64(info.double_min),
		Float64MinExcluded: info.double_min_exclusive != 0}, nil
}

// SetRecoverable chooses whether a run failing with status triggers recovery (MonitoredSession; by
// default Aborted and Unavailable, TF's preemption errors).
func (o *Options) SetRecoverable(status Status, recoverable bool) error {
	flag := C.int(0)
	if recoverable {
		flag = 1
	}
	return o.set(func() C.tw_status { return C.tw_options_set_recoverable(o.c, C.tw_status(status), flag) })
}

// RecordError records a failure of this rank's own preparation, as a failed AddVariable does: the
// session or saver created from these options fails with it (in a job, on every rank).
func (o *Options) RecordError(status Status, message string) error {
	cmessage, err := cString("message", message)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cmessage))
	return o.set(func() C.tw_status { return C.tw_options_record_error(o.c, C.tw_status(status), cmessage) })
}

// SetInitFunc is TF's Scaffold(init_fn): the chief calls fn when it restored nothing (first
// creation, and every recovery that restores nothing). nil removes it.
func (o *Options) SetInitFunc(fn func(s *SessionRef) error) error {
	return o.setCallback(fn == nil, fn, func(h C.uintptr_t) C.tw_status { return C.twgo_options_set_init_fn(o.c, h) })
}

// SetReadyFunc is a worker's readiness test (TF's ready_op): creation polls fn every
// OptRecoveryWaitSecs until it reports true, or fails with DeadlineExceeded after OptMaxWaitSecs.
func (o *Options) SetReadyFunc(fn func(s *SessionRef) (bool, error)) error {
	return o.setCallback(fn == nil, fn, func(h C.uintptr_t) C.tw_status { return C.twgo_options_set_ready_fn(o.c, h) })
}

// setCallback hands a Go callback to the library as a handle it releases (none when remove).
func (o *Options) setCallback(remove bool, fn any, set func(C.uintptr_t) C.tw_status) error {
	if err := o.live(); err != nil {
		return err
	}
	if remove {
		return check(func() C.tw_status { return set(0) })
	}
	handle := handleOf(fn)
	if err := check(func() C.tw_status { return set(C.uintptr_t(handle)) }); err != nil {
		handle.Delete()
		return err
	}
	return nil
}

//export twgoInit
func twgoInit(handle C.uintptr_t, cs *C.tw_session) C.tw_status {
	fn := valueOf[func(*SessionRef) error](handle)
	return guard(func() error { return withSession(cs, fn) })
}

//export twgoReady
func twgoReady(handle C.uintptr_t, cs *C.tw_session, ready *C.int) C.tw_status {
	fn := valueOf[func(*SessionRef) (bool, error)](handle)
	return guard(func() error {
		return withSession(cs, func(s *SessionRef) error {
			ok, err := fn(s)
			if ok {
				*ready = 1
			}
			return err
		})
	})
}

// withSession lends a SessionRef valid during a callback only.
func withSession(cs *C.tw_session, fn func(*SessionRef) error) error {
	ref := &SessionRef{c: cs}
	defer func() { ref.c = nil }()
	return fn(ref)
}

// Options configure sessions (and CheckpointSaverHook) and register the variables sessions train,
// save and restore in place. Close frees them; sessions made from them are not affected.
type Options struct {
	c         *C.tw_options
	variables heldTensors
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
	o.variables.release()
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
	o.variables.add(t)
	return nil
}
