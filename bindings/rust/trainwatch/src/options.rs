//! Session options: an owned `tw_options` with typed setters, and the variables a session checkpoints.
use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::callback::{hand_over, user_of};
use crate::error::{c_string, check, guard, Code, Error, Result};
use crate::session::SessionRef;
use crate::sys;
use crate::tensor::{c_view, check_holds, Element};

/// Option keys (`tw_option`). Each has one type; the setter of another type fails with
/// `InvalidArgument`. The comments give the type and TF's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Opt {
    /// i64 0/1, default 1.
    IsChief,
    /// string, default unset: where the chief restores from.
    CheckpointDir,
    /// i64, default 10, -1 = unlimited.
    MaxRecoveryAttempts,
    /// f64 seconds, default 1.
    RecoveryBackoffSecs,
    /// f64 seconds, default 60.
    RecoveryBackoffMaxSecs,
    /// f64 seconds, default 30.
    RecoveryWaitSecs,
    /// f64 seconds, default 1800.
    MaxWaitSecs,
    /// i64 0/1, default 1.
    AutoIncrementGlobalStep,
    /// i64, default 0.
    InitialGlobalStep,
    /// i64 0/1, default 0.
    CheckNumerics,
    /// i64, default 5.
    MaxToKeep,
    /// f64, default 10000.
    KeepCheckpointEveryNHours,
    /// f64 seconds, no default: MonitoredTrainingSession's save_checkpoint_secs.
    CheckpointEveryNSecs,
    /// i64, no default: MonitoredTrainingSession's save_checkpoint_steps.
    CheckpointEveryNSteps,
    /// string, default "model.ckpt".
    CheckpointBasename,
    /// i64 0/1, default 1.
    AsyncCheckpoint,
    /// string, default: `CheckpointDir`. Where MonitoredTrainingSession's StepCounterHook and
    /// SummarySaverHook write.
    SummaryDir,
    /// i64 >= 0: MonitoredTrainingSession's save_summaries_steps (both left default: every 100 steps).
    SummaryEveryNSteps,
    /// f64 seconds: MonitoredTrainingSession's save_summaries_secs.
    SummaryEveryNSecs,
    /// i64 >= 0, default 100: MonitoredTrainingSession's log_step_count_steps (0: no StepCounterHook).
    StepCountEveryNSteps,
    /// i64 0/1, default 0: an asynchronous CheckpointSaverHook calls its listeners' `after_save` in a
    /// later run instead of waiting for the write.
    DeferredCheckpointListeners,
    /// i64 0/1, default 0: SIGTERM/SIGUSR1 make every rank save and stop cleanly.
    CatchPreemptionSignals,
    /// i64 0/1, default 0: an evicted checkpoint's file is recycled by a later save.
    CheckpointRecycleFiles,
    /// i64 (a `tw_nan_action`), default 0 = fail.
    NanAction,
    /// i64 0/1, default 1.
    NanDetectInf,
    /// i64, default 1.
    NanEveryNSteps,
    /// i64, default 3.
    NanMaxRollbacks,
    /// i64, default unset: a periodic hook's period in steps (CheckpointSaverHook's save_steps).
    EveryNSteps,
    /// f64 seconds, default unset: a periodic hook's period in seconds.
    EveryNSecs,
    /// string, default unset: SummarySaverHook's, StepCounterHook's and ProfilerHook's output_dir.
    OutputDir,
    /// i64 0/1, default 0: LoggingTensorHook's at_end.
    LogAtEnd,
    /// i64 >= 0, default 32: LoggingTensorHook prints values of at most this many elements in full.
    LogMaxElements,
    /// i64 0/1, default 1: SummarySaverHook writes values of more than one element as histograms.
    SummaryHistograms,
    /// f64 seconds, default 0.5: GlobalStepWaiterHook's poll interval.
    WaitPollSecs,
    /// f64 seconds, default -1 = forever: GlobalStepWaiterHook's deadline.
    WaitMaxSecs,
    /// string, default unset: comma-separated names or patterns SummarySaverHook writes as histograms.
    SummaryHistogramNames,
    /// f64 seconds, default 600: how long one collective operation may take.
    CollectiveTimeoutSecs,
    /// i64 >= 1, default 1: vote every N runs in a job of many ranks.
    VoteEveryNRuns,
    /// i64 0/1, default 0: the chief broadcasts restored variables instead of every rank reading.
    RestoreViaBroadcast,
}

impl Opt {
    /// The stable `tw_option` value.
    pub fn raw(self) -> sys::tw_option {
        match self {
            Opt::IsChief => 1,
            Opt::CheckpointDir => 2,
            Opt::MaxRecoveryAttempts => 3,
            Opt::RecoveryBackoffSecs => 4,
            Opt::RecoveryBackoffMaxSecs => 5,
            Opt::RecoveryWaitSecs => 6,
            Opt::MaxWaitSecs => 7,
            Opt::AutoIncrementGlobalStep => 8,
            Opt::InitialGlobalStep => 9,
            Opt::CheckNumerics => 10,
            Opt::MaxToKeep => 11,
            Opt::KeepCheckpointEveryNHours => 12,
            Opt::CheckpointEveryNSecs => 13,
            Opt::CheckpointEveryNSteps => 14,
            Opt::CheckpointBasename => 15,
            Opt::AsyncCheckpoint => 16,
            Opt::SummaryDir => 17,
            Opt::SummaryEveryNSteps => 18,
            Opt::SummaryEveryNSecs => 19,
            Opt::StepCountEveryNSteps => 20,
            Opt::DeferredCheckpointListeners => 21,
            Opt::CatchPreemptionSignals => 22,
            Opt::CheckpointRecycleFiles => 23,
            Opt::NanAction => 100,
            Opt::NanDetectInf => 101,
            Opt::NanEveryNSteps => 102,
            Opt::NanMaxRollbacks => 103,
            Opt::EveryNSteps => 200,
            Opt::EveryNSecs => 201,
            Opt::OutputDir => 202,
            Opt::LogAtEnd => 203,
            Opt::LogMaxElements => 204,
            Opt::SummaryHistograms => 205,
            Opt::WaitPollSecs => 206,
            Opt::WaitMaxSecs => 207,
            Opt::SummaryHistogramNames => 208,
            Opt::CollectiveTimeoutSecs => 300,
            Opt::VoteEveryNRuns => 301,
            Opt::RestoreViaBroadcast => 302,
        }
    }
}

/// Session options (`tw_options`), and the variables sessions made from them train, save and
/// restore in place. `'v` is the borrow of those variables: a session made from these options keeps
/// it, so the buffers outlive every session that may write into them.
///
/// ```no_run
/// # fn main() -> trainwatch::Result<()> {
/// let mut w = [0f32; 4];
/// let mut opts = trainwatch::Options::new()?;
/// opts.variable("w", &mut w, &[4])?
///     .set_str(trainwatch::Opt::CheckpointDir, "/tmp/ckpt")?
///     .set_i64(trainwatch::Opt::EveryNSteps, 100)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Options<'v> {
    raw: NonNull<sys::tw_options>,
    _variables: PhantomData<&'v mut [u8]>,
}

impl<'v> Options<'v> {
    /// Every default (TF's).
    pub fn new() -> Result<Options<'v>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::tw_options_create(&mut raw) })?;
        let raw = NonNull::new(raw).ok_or_else(|| Error::new(crate::Code::Internal, "tw_options_create gave NULL"))?;
        Ok(Options { raw, _variables: PhantomData })
    }

    pub fn set_i64(&mut self, key: Opt, value: i64) -> Result<&mut Self> {
        // SAFETY: self.raw is a live options object.
        check(unsafe { sys::tw_options_set_int64(self.raw.as_ptr(), key.raw(), value) })?;
        Ok(self)
    }

    /// For the 0/1 options.
    pub fn set_bool(&mut self, key: Opt, value: bool) -> Result<&mut Self> {
        self.set_i64(key, value as i64)
    }

    pub fn set_f64(&mut self, key: Opt, value: f64) -> Result<&mut Self> {
        // SAFETY: as above.
        check(unsafe { sys::tw_options_set_double(self.raw.as_ptr(), key.raw(), value) })?;
        Ok(self)
    }

    pub fn set_str(&mut self, key: Opt, value: &str) -> Result<&mut Self> {
        let value = c_string("option value", value)?;
        // SAFETY: the library copies the string.
        check(unsafe { sys::tw_options_set_string(self.raw.as_ptr(), key.raw(), value.as_ptr()) })?;
        Ok(self)
    }

    /// A path option (`CheckpointDir`); the path must be UTF-8.
    pub fn set_path(&mut self, key: Opt, value: impl AsRef<Path>) -> Result<&mut Self> {
        let value = value.as_ref();
        let text = value.to_str().ok_or_else(|| Error::invalid(format!("path {:?} is not UTF-8", value)))?;
        self.set_str(key, text)
    }

    /// TF's `None` for the option.
    pub fn set_none(&mut self, key: Opt) -> Result<&mut Self> {
        // SAFETY: as above.
        check(unsafe { sys::tw_options_set_none(self.raw.as_ptr(), key.raw()) })?;
        Ok(self)
    }

    pub fn get_i64(&self, key: Opt) -> Result<i64> {
        let mut out = 0;
        // SAFETY: valid object and out-pointer.
        check(unsafe { sys::tw_options_get_int64(&mut out, self.raw.as_ptr(), key.raw()) })?;
        Ok(out)
    }

    pub fn get_f64(&self, key: Opt) -> Result<f64> {
        let mut out = 0.0;
        // SAFETY: valid object and out-pointer.
        check(unsafe { sys::tw_options_get_double(&mut out, self.raw.as_ptr(), key.raw()) })?;
        Ok(out)
    }

    /// `None` for an unset string option.
    pub fn get_str(&self, key: Opt) -> Result<Option<String>> {
        let mut out = ptr::null();
        // SAFETY: valid object and out-pointer; the string is copied before the next call.
        check(unsafe { sys::tw_options_get_string(&mut out, self.raw.as_ptr(), key.raw()) })?;
        Ok(if out.is_null() { None } else { Some(unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned()) })
    }

    /// Registers `data` as the variable `name` with `shape` (element count = `data.len()`): hooks can
    /// fetch it, checkpoints save it and restore writes into it, zero copy. While sessions run, reach
    /// it through `SessionRef::variable` or `StepContext::variable_mut`.
    pub fn variable<T: Element>(&mut self, name: &str, data: &'v mut [T], shape: &[i64]) -> Result<&mut Self> {
        check_holds("variable", name, shape, data.len())?;
        let c_name = c_string("variable name", name)?;
        let view = c_view(&c_name, T::DTYPE, data.as_mut_ptr() as *mut c_void, shape);
        // SAFETY: the view is copied; the data is borrowed for 'v, which every session made from
        // these options carries.
        check(unsafe { sys::tw_options_add_variable(self.raw.as_ptr(), &view) })?;
        Ok(self)
    }

    /// Registers `data` as this rank's box of a tensor sharded across a job's ranks (FSDP, ZeRO):
    /// `shape` is the box's extent, `global_shape` the whole tensor's, `offset` where the box starts.
    /// Checkpoints hold every rank's boxes and restore into any slicing of the same global tensor.
    pub fn shard<T: Element>(
        &mut self,
        name: &str,
        data: &'v mut [T],
        shape: &[i64],
        global_shape: &[i64],
        offset: &[i64],
    ) -> Result<&mut Self> {
        check_holds("shard", name, shape, data.len())?;
        if global_shape.len() != shape.len() || offset.len() != shape.len() {
            return Err(Error::invalid(format!(
                "shard '{}': shape {:?}, global_shape {:?} and offset {:?} differ in rank",
                name, shape, global_shape, offset
            )));
        }
        let c_name = c_string("variable name", name)?;
        let view = c_view(&c_name, T::DTYPE, data.as_mut_ptr() as *mut c_void, shape);
        // SAFETY: the view and arrays are copied; the data is borrowed for 'v.
        check(unsafe { sys::tw_options_add_shard(self.raw.as_ptr(), &view, global_shape.as_ptr(), offset.as_ptr()) })?;
        Ok(self)
    }

    /// Whether the option was left at its default, set to None, or given a value.
    pub fn state(&self, key: Opt) -> Result<OptionState> {
        let mut out = 0;
        // SAFETY: valid object and out-pointer.
        check(unsafe { sys::tw_options_get_state(&mut out, self.raw.as_ptr(), key.raw()) })?;
        Ok(match out {
            sys::TW_OPTION_NONE => OptionState::None,
            sys::TW_OPTION_SET => OptionState::Set,
            _ => OptionState::Default,
        })
    }

    /// Whether a run failing with `code` triggers recovery (default: `Aborted` and `Unavailable`).
    pub fn set_recoverable(&mut self, code: Code, recoverable: bool) -> Result<&mut Self> {
        // SAFETY: a live options object.
        check(unsafe { sys::tw_options_set_recoverable(self.raw.as_ptr(), code.status(), recoverable as c_int) })?;
        Ok(self)
    }

    /// Records a failure of this rank's own preparation: sessions and savers made from these options
    /// then fail with it (in a job, on every rank).
    pub fn record_error(&mut self, code: Code, message: &str) -> Result<&mut Self> {
        let message = c_string("message", message)?;
        // SAFETY: the message is copied.
        check(unsafe { sys::tw_options_record_error(self.raw.as_ptr(), code.status(), message.as_ptr()) })?;
        Ok(self)
    }

    /// TF's `Scaffold(init_fn=…)`: runs when a chief finds no checkpoint to restore.
    pub fn set_init_fn<F>(&mut self, init: F) -> Result<&mut Self>
    where
        F: FnMut(&SessionRef<'_>) -> Result<()> + Send + 'static,
    {
        let boxed: InitFn = Box::new(init);
        self.set_callback(boxed, init_trampoline as sys::tw_init_fn, sys::tw_options_set_init_fn)
    }

    /// TF's `Scaffold(ready_op=…)`: a worker waits until `ready` returns true.
    pub fn set_ready_fn<F>(&mut self, ready: F) -> Result<&mut Self>
    where
        F: FnMut(&SessionRef<'_>) -> Result<bool> + Send + 'static,
    {
        let boxed: ReadyFn = Box::new(ready);
        self.set_callback(boxed, ready_trampoline as sys::tw_ready_fn, sys::tw_options_set_ready_fn)
    }

    /// Gives the options `value` behind the C callback `trampoline` through `set` (a
    /// `tw_options_set_*_fn`); the options own it once `set` succeeds.
    fn set_callback<T, F>(
        &mut self,
        value: T,
        trampoline: F,
        set: unsafe extern "C" fn(
            *mut sys::tw_options,
            Option<F>,
            *mut c_void,
            Option<sys::tw_destroy_fn>,
        ) -> sys::tw_status,
    ) -> Result<&mut Self> {
        let raw = self.raw.as_ptr();
        // SAFETY: a live options object; `hand_over` frees `value` if `set` fails.
        check(hand_over(Some(value), trampoline, |callback, user, destroy| unsafe {
            set(raw, callback, user, destroy)
        }))?;
        Ok(self)
    }

    pub(crate) fn as_ptr(&self) -> *const sys::tw_options {
        self.raw.as_ptr()
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut sys::tw_options {
        self.raw.as_ptr()
    }
}

type InitFn = Box<dyn FnMut(&SessionRef<'_>) -> Result<()> + Send>;
type ReadyFn = Box<dyn FnMut(&SessionRef<'_>) -> Result<bool> + Send>;

unsafe extern "C" fn init_trampoline(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
    guard(|| (user_of::<InitFn>(user))(&SessionRef::from_raw(session)))
}

unsafe extern "C" fn ready_trampoline(
    user: *mut c_void,
    session: *mut sys::tw_session,
    ready: *mut c_int,
) -> sys::tw_status {
    guard(|| {
        *ready = (user_of::<ReadyFn>(user))(&SessionRef::from_raw(session))? as c_int;
        Ok(())
    })
}

/// `Options::state`: TF distinguishes an argument left at its default from one given as `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionState {
    Default,
    None,
    Set,
}

/// The type of an option's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionType {
    I64,
    F64,
    Str,
}

/// What the library knows of an option (its setters check against it).
#[derive(Clone, Debug, PartialEq)]
pub struct OptionInfo {
    pub key: i32,
    /// "TW_OPT_MAX_TO_KEEP".
    pub name: &'static str,
    pub option_type: OptionType,
    /// `TW_OPTION_READ_BY_*` bits.
    pub read_by: u32,
    pub i64_default: i64,
    pub i64_min: i64,
    pub i64_max: i64,
    pub f64_default: f64,
    pub f64_min: f64,
    pub f64_min_exclusive: bool,
}

fn option_info(fill: impl FnOnce(*mut sys::tw_option_info) -> sys::tw_status) -> Result<OptionInfo> {
    let mut out = sys::tw_option_info {
        struct_size: std::mem::size_of::<sys::tw_option_info>() as u32,
        key: 0,
        name: ptr::null(),
        type_: 0,
        read_by: 0,
        int64_default: 0,
        int64_min: 0,
        int64_max: 0,
        double_default: 0.0,
        double_min: 0.0,
        double_min_exclusive: 0,
    };
    check(fill(&mut out))?;
    Ok(OptionInfo {
        key: out.key,
        // SAFETY: static storage in the library.
        name: unsafe { CStr::from_ptr(out.name) }.to_str().unwrap_or(""),
        option_type: match out.type_ {
            sys::TW_OPTION_TYPE_DOUBLE => OptionType::F64,
            sys::TW_OPTION_TYPE_STRING => OptionType::Str,
            _ => OptionType::I64,
        },
        read_by: out.read_by,
        i64_default: out.int64_default,
        i64_min: out.int64_min,
        i64_max: out.int64_max,
        f64_default: out.double_default,
        f64_min: out.double_min,
        f64_min_exclusive: out.double_min_exclusive != 0,
    })
}

impl Opt {
    /// The library's description of this option.
    pub fn info(self) -> Result<OptionInfo> {
        // SAFETY: a valid out-pointer.
        option_info(|out| unsafe { sys::tw_option_info_by_key(out, self.raw()) })
    }

    /// An option by name: "TW_OPT_MAX_TO_KEEP" or "max_to_keep", any case.
    pub fn info_by_name(name: &str) -> Result<OptionInfo> {
        let name = c_string("option name", name)?;
        // SAFETY: valid pointers.
        option_info(|out| unsafe { sys::tw_option_info_by_name(out, name.as_ptr()) })
    }
}

impl Drop for Options<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::tw_options_destroy(self.raw.as_ptr()) }
    }
}
