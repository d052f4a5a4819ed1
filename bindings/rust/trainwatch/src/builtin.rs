//! TF's built-in hooks, each made by a builder (`NanTensorHook::new("loss").action(…).build()`) whose
//! setters mirror TF's constructor arguments; `build` checks them as TF does and returns the `Hook`.
use std::ffi::CString;
use std::os::raw::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::ptr;

use crate::callback::{destroy_boxed, into_user, reclaim, user_of};
use crate::error::{c_string, check, guard, Error, Result};
use crate::hook::Hook;
use crate::listener::CheckpointListener;
use crate::options::{Opt, Options};
use crate::session::{SessionRef, StepContext};
use crate::summary::SummaryWriter;
use crate::sys;
use crate::tensor::{Tensor, TensorRef, View};

/// A path as the C API takes it (UTF-8, no NUL).
pub(crate) fn c_path(what: &str, path: &Path) -> Result<CString> {
    let text = path.to_str().ok_or_else(|| Error::invalid(format!("{} {:?} is not UTF-8", what, path)))?;
    c_string(what, text)
}

/// Names as a C array of pointers; the `CString`s must outlive the pointers.
fn c_strings(what: &str, names: &[String]) -> Result<(Vec<CString>, Vec<*const c_char>)> {
    let owned = names.iter().map(|n| c_string(what, n)).collect::<Result<Vec<_>>>()?;
    let pointers = owned.iter().map(|n| n.as_ptr()).collect();
    Ok((owned, pointers))
}

/// A periodic hook's timer: TF's `every_n_steps` / `every_n_secs` (`save_steps` / `save_secs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Period {
    steps: Option<i64>,
    secs: Option<f64>,
}

impl Period {
    fn apply(&self, opts: &mut Options<'_>) -> Result<()> {
        if let Some(steps) = self.steps {
            opts.set_i64(Opt::EveryNSteps, steps)?;
        }
        if let Some(secs) = self.secs {
            opts.set_f64(Opt::EveryNSecs, secs)?;
        }
        Ok(())
    }
}

fn finish(status: sys::tw_status, raw: *mut sys::tw_hook) -> Result<Hook> {
    check(status)?;
    Hook::from_created(raw)
}

// ------------------------------------------------------------------------------------------------
// CheckpointSaverHook
// ------------------------------------------------------------------------------------------------

/// TF's `CheckpointSaverHook(checkpoint_dir, save_secs=None, save_steps=None, saver=None,
/// checkpoint_basename='model.ckpt', listeners=None)`: exactly one of `save_steps` / `save_secs`.
#[derive(Debug)]
pub struct CheckpointSaverHook {
    dir: PathBuf,
    period: Period,
    basename: Option<String>,
    async_save: Option<bool>,
    max_to_keep: Option<i64>,
    listeners: Vec<CheckpointListener>,
}

impl CheckpointSaverHook {
    pub fn new(checkpoint_dir: impl AsRef<Path>) -> CheckpointSaverHook {
        CheckpointSaverHook {
            dir: checkpoint_dir.as_ref().to_path_buf(),
            period: Period::default(),
            basename: None,
            async_save: None,
            max_to_keep: None,
            listeners: Vec::new(),
        }
    }
    pub fn save_steps(mut self, steps: i64) -> Self {
        self.period.steps = Some(steps);
        self
    }
    pub fn save_secs(mut self, secs: f64) -> Self {
        self.period.secs = Some(secs);
        self
    }
    /// Default "model.ckpt".
    pub fn checkpoint_basename(mut self, basename: &str) -> Self {
        self.basename = Some(basename.to_string());
        self
    }
    /// Default true: copy, then compress and write in the background.
    pub fn async_checkpoint(mut self, on: bool) -> Self {
        self.async_save = Some(on);
        self
    }
    /// The saver's max_to_keep (default 5).
    pub fn max_to_keep(mut self, n: i64) -> Self {
        self.max_to_keep = Some(n);
        self
    }
    /// Adds a listener (TF's `listeners`), called in the order added.
    pub fn listener(mut self, listener: CheckpointListener) -> Self {
        self.listeners.push(listener);
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        self.period.apply(&mut opts)?;
        if let Some(basename) = &self.basename {
            opts.set_str(Opt::CheckpointBasename, basename)?;
        }
        if let Some(on) = self.async_save {
            opts.set_bool(Opt::AsyncCheckpoint, on)?;
        }
        if let Some(n) = self.max_to_keep {
            opts.set_i64(Opt::MaxToKeep, n)?;
        }
        checkpoint_saver_hook(&self.dir, &opts, &self.listeners.iter().collect::<Vec<_>>())
    }
}

pub(crate) fn checkpoint_saver_hook(dir: &Path, opts: &Options<'_>, listeners: &[&CheckpointListener]) -> Result<Hook> {
    let dir = c_path("checkpoint_dir", dir)?;
    let raw_listeners: Vec<*mut sys::tw_checkpoint_listener> = listeners.iter().map(|l| l.as_ptr()).collect();
    let mut raw = ptr::null_mut();
    // SAFETY: valid pointers for the call; the hook takes its own listener references.
    let status = unsafe {
        sys::tw_checkpoint_saver_hook_create(
            &mut raw,
            dir.as_ptr(),
            opts.as_ptr(),
            raw_listeners.as_ptr(),
            raw_listeners.len(),
        )
    };
    finish(status, raw)
}

// ------------------------------------------------------------------------------------------------
// NanTensorHook
// ------------------------------------------------------------------------------------------------

/// What a `NanTensorHook` does on a NaN (or ±Inf when detecting Inf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanAction {
    /// Fail the run with `Code::NanLoss` (TF's `fail_on_nan_loss=True`).
    Fail,
    /// Log a warning and request a stop (TF's `fail_on_nan_loss=False`).
    Stop,
    /// Restore the newest good checkpoint of the checkpoint dir and go on (at most `max_rollbacks`).
    Rollback,
}

/// One bad value a `NanTensorHook` found, as its `on_nan` callback sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NanEvent {
    pub tensor_name: String,
    /// The global step the run started at.
    pub global_step: i64,
    pub nan_count: i64,
    pub pos_inf_count: i64,
    pub neg_inf_count: i64,
    pub first_nonfinite_index: i64,
}

type NanFn = Box<dyn FnMut(&SessionRef<'_>, &NanEvent) -> Result<()> + Send>;

unsafe extern "C" fn nan_trampoline(
    user: *mut c_void,
    session: *mut sys::tw_session,
    event: *const sys::tw_nan_event,
) -> sys::tw_status {
    guard(|| {
        let event = &*event;
        let event = NanEvent {
            tensor_name: std::ffi::CStr::from_ptr(event.tensor_name).to_string_lossy().into_owned(),
            global_step: event.global_step,
            nan_count: event.nan_count,
            pos_inf_count: event.pos_inf_count,
            neg_inf_count: event.neg_inf_count,
            first_nonfinite_index: event.first_nonfinite_index,
        };
        (user_of::<NanFn>(user))(&SessionRef::from_raw(session), &event)
    })
}

/// TF's `NanTensorHook(loss_tensor, fail_on_nan_loss=True)`, extended: several watched values, Inf
/// detection, a period, rollback to the newest good checkpoint, or a callback that decides.
pub struct NanTensorHook {
    watch: Vec<String>,
    action: NanAction,
    detect_inf: Option<bool>,
    every_n_steps: Option<i64>,
    max_rollbacks: Option<i64>,
    checkpoint_dir: Option<PathBuf>,
    on_nan: Option<NanFn>,
}

impl NanTensorHook {
    /// Watches `loss` (a published output or a variable); more with `watch`.
    pub fn new(loss: &str) -> NanTensorHook {
        NanTensorHook {
            watch: vec![loss.to_string()],
            action: NanAction::Fail,
            detect_inf: None,
            every_n_steps: None,
            max_rollbacks: None,
            checkpoint_dir: None,
            on_nan: None,
        }
    }
    pub fn watch(mut self, name: &str) -> Self {
        self.watch.push(name.to_string());
        self
    }
    pub fn action(mut self, action: NanAction) -> Self {
        self.action = action;
        self
    }
    /// Also treat ±Inf as a divergence (default true; TF's hook sees only NaN).
    pub fn detect_inf(mut self, on: bool) -> Self {
        self.detect_inf = Some(on);
        self
    }
    /// Check only runs starting at a multiple of `n` (default 1).
    pub fn every_n_steps(mut self, n: i64) -> Self {
        self.every_n_steps = Some(n);
        self
    }
    /// `NanAction::Rollback`: how many rollbacks before failing (default 3).
    pub fn max_rollbacks(mut self, n: i64) -> Self {
        self.max_rollbacks = Some(n);
        self
    }
    /// `NanAction::Rollback`: the directory to roll back from.
    pub fn checkpoint_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.checkpoint_dir = Some(dir.as_ref().to_path_buf());
        self
    }
    /// Calls `f` for every bad value instead of acting: `Ok` goes on (it may request a stop through
    /// the session), `Err` fails the run.
    pub fn on_nan<F>(mut self, f: F) -> Self
    where
        F: FnMut(&SessionRef<'_>, &NanEvent) -> Result<()> + Send + 'static,
    {
        self.on_nan = Some(Box::new(f));
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        let action = match (&self.on_nan, self.action) {
            (Some(_), _) => sys::TW_NAN_ACTION_CALLBACK,
            (None, NanAction::Fail) => sys::TW_NAN_ACTION_FAIL,
            (None, NanAction::Stop) => sys::TW_NAN_ACTION_STOP,
            (None, NanAction::Rollback) => sys::TW_NAN_ACTION_ROLLBACK,
        };
        opts.set_i64(Opt::NanAction, action)?;
        if let Some(on) = self.detect_inf {
            opts.set_bool(Opt::NanDetectInf, on)?;
        }
        if let Some(n) = self.every_n_steps {
            opts.set_i64(Opt::NanEveryNSteps, n)?;
        }
        if let Some(n) = self.max_rollbacks {
            opts.set_i64(Opt::NanMaxRollbacks, n)?;
        }
        if let Some(dir) = &self.checkpoint_dir {
            opts.set_path(Opt::CheckpointDir, dir)?;
        }
        let (_names, pointers) = c_strings("watched name", &self.watch)?;
        let mut raw = ptr::null_mut();
        let (callback, user): (Option<sys::tw_nan_fn>, *mut c_void) = match self.on_nan {
            Some(f) => (Some(nan_trampoline), into_user::<NanFn>(f)),
            None => (None, ptr::null_mut()),
        };
        let destroy = if user.is_null() { None } else { Some(destroy_boxed::<NanFn> as sys::tw_destroy_fn) };
        // SAFETY: valid pointers; names and options are copied; on success the hook owns `user`.
        let status = unsafe {
            sys::tw_nan_tensor_hook_create_with_options(
                &mut raw,
                pointers.as_ptr(),
                pointers.len(),
                opts.as_ptr(),
                callback,
                user,
                destroy,
            )
        };
        if status != sys::TW_OK && !user.is_null() {
            // SAFETY: not taken.
            unsafe { reclaim::<NanFn>(user) };
        }
        finish(status, raw)
    }
}

// ------------------------------------------------------------------------------------------------
// LoggingTensorHook
// ------------------------------------------------------------------------------------------------

type Formatter = Box<dyn FnMut(&[TensorRef<'_>]) -> Result<String> + Send>;

unsafe extern "C" fn format_trampoline(
    user: *mut c_void,
    values: *const *const sys::tw_tensor,
    n_values: usize,
    buffer: *mut c_char,
    buffer_size: usize,
    length: *mut usize,
) -> sys::tw_status {
    guard(|| {
        let views: Vec<TensorRef<'_>> = (0..n_values).map(|i| TensorRef::from_raw(**values.add(i))).collect();
        let text = (user_of::<Formatter>(user))(&views)?;
        *length = text.len();
        if buffer_size > 0 {
            let n = text.len().min(buffer_size - 1);
            ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, buffer, n);
            *buffer.add(n) = 0;
        }
        Ok(())
    })
}

/// TF's `LoggingTensorHook(tensors, every_n_iter=None, every_n_secs=None, at_end=False,
/// formatter=None)`: logs the named values at INFO.
pub struct LoggingTensorHook {
    names: Vec<String>,
    tags: Option<Vec<String>>,
    period: Period,
    at_end: Option<bool>,
    max_elements: Option<i64>,
    formatter: Option<Formatter>,
}

impl LoggingTensorHook {
    /// TF's list form: each name is its own tag, printed in this order.
    pub fn new<S: AsRef<str>>(names: &[S]) -> LoggingTensorHook {
        LoggingTensorHook {
            names: names.iter().map(|n| n.as_ref().to_string()).collect(),
            tags: None,
            period: Period::default(),
            at_end: None,
            max_elements: None,
            formatter: None,
        }
    }
    /// TF's dict form: `(tag, name)` pairs, printed sorted by tag.
    pub fn tagged<S: AsRef<str>, T: AsRef<str>>(pairs: &[(T, S)]) -> LoggingTensorHook {
        let mut hook = LoggingTensorHook::new(&pairs.iter().map(|(_, n)| n.as_ref()).collect::<Vec<_>>());
        hook.tags = Some(pairs.iter().map(|(t, _)| t.as_ref().to_string()).collect());
        hook
    }
    pub fn every_n_iter(mut self, n: i64) -> Self {
        self.period.steps = Some(n);
        self
    }
    pub fn every_n_secs(mut self, secs: f64) -> Self {
        self.period.secs = Some(secs);
        self
    }
    pub fn at_end(mut self, on: bool) -> Self {
        self.at_end = Some(on);
        self
    }
    /// Values of more elements are summarised (default 32).
    pub fn max_elements(mut self, n: i64) -> Self {
        self.max_elements = Some(n);
        self
    }
    /// Writes the line itself from the values (tags as names, in print order).
    pub fn formatter<F>(mut self, f: F) -> Self
    where
        F: FnMut(&[TensorRef<'_>]) -> Result<String> + Send + 'static,
    {
        self.formatter = Some(Box::new(f));
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        self.period.apply(&mut opts)?;
        if let Some(on) = self.at_end {
            opts.set_bool(Opt::LogAtEnd, on)?;
        }
        if let Some(n) = self.max_elements {
            opts.set_i64(Opt::LogMaxElements, n)?;
        }
        let (_names, names) = c_strings("tensor name", &self.names)?;
        let tags = match &self.tags {
            Some(tags) => Some(c_strings("tag", tags)?),
            None => None,
        };
        let tag_ptr = tags.as_ref().map_or(ptr::null(), |(_, p)| p.as_ptr());
        let (callback, user): (Option<sys::tw_log_formatter_fn>, *mut c_void) = match self.formatter {
            Some(f) => (Some(format_trampoline), into_user::<Formatter>(f)),
            None => (None, ptr::null_mut()),
        };
        let destroy = if user.is_null() { None } else { Some(destroy_boxed::<Formatter> as sys::tw_destroy_fn) };
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; names, tags and options are copied; on success the hook owns `user`.
        let status = unsafe {
            sys::tw_logging_tensor_hook_create(
                &mut raw,
                names.as_ptr(),
                tag_ptr,
                names.len(),
                opts.as_ptr(),
                callback,
                user,
                destroy,
            )
        };
        if status != sys::TW_OK && !user.is_null() {
            // SAFETY: not taken.
            unsafe { reclaim::<Formatter>(user) };
        }
        finish(status, raw)
    }
}

// ------------------------------------------------------------------------------------------------
// StepCounterHook, SummarySaverHook, ProfilerHook
// ------------------------------------------------------------------------------------------------

/// TF's `StepCounterHook(every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None)`:
/// logs "global_step/sec" and writes it as a summary when it has a writer.
#[derive(Default)]
pub struct StepCounterHook<'w> {
    period: Period,
    output_dir: Option<PathBuf>,
    writer: Option<&'w SummaryWriter>,
}

impl<'w> StepCounterHook<'w> {
    pub fn new() -> StepCounterHook<'w> {
        StepCounterHook::default()
    }
    pub fn every_n_steps(mut self, n: i64) -> Self {
        self.period.steps = Some(n);
        self
    }
    /// Counts by time instead of the default 100 steps.
    pub fn every_n_secs(mut self, secs: f64) -> Self {
        self.period.secs = Some(secs);
        self
    }
    pub fn output_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.output_dir = Some(dir.as_ref().to_path_buf());
        self
    }
    pub fn summary_writer(mut self, writer: &'w SummaryWriter) -> Self {
        self.writer = Some(writer);
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        if self.period.secs.is_some() && self.period.steps.is_none() {
            opts.set_none(Opt::EveryNSteps)?;
        }
        self.period.apply(&mut opts)?;
        if let Some(dir) = &self.output_dir {
            opts.set_path(Opt::OutputDir, dir)?;
        }
        let writer = self.writer.map_or(ptr::null_mut(), SummaryWriter::as_ptr);
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; the hook takes its own writer reference.
        let status = unsafe { sys::tw_step_counter_hook_create(&mut raw, opts.as_ptr(), writer) };
        finish(status, raw)
    }
}

/// TF's `SummarySaverHook(save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
/// summary_op=None)`: `summarize` names (or fnmatch patterns) the published values and variables to
/// write, every one when empty.
#[derive(Default)]
pub struct SummarySaverHook<'w> {
    summarize: Vec<String>,
    period: Period,
    output_dir: Option<PathBuf>,
    writer: Option<&'w SummaryWriter>,
    histograms: Option<bool>,
    histogram_names: Option<String>,
}

impl<'w> SummarySaverHook<'w> {
    pub fn new() -> SummarySaverHook<'w> {
        SummarySaverHook::default()
    }
    /// A name or pattern to write (repeatable); none means every value.
    pub fn summarize(mut self, name: &str) -> Self {
        self.summarize.push(name.to_string());
        self
    }
    pub fn save_steps(mut self, n: i64) -> Self {
        self.period.steps = Some(n);
        self
    }
    pub fn save_secs(mut self, secs: f64) -> Self {
        self.period.secs = Some(secs);
        self
    }
    pub fn output_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.output_dir = Some(dir.as_ref().to_path_buf());
        self
    }
    pub fn summary_writer(mut self, writer: &'w SummaryWriter) -> Self {
        self.writer = Some(writer);
        self
    }
    /// Write values of more than one element as histograms (default true, for the names asked for).
    pub fn histograms(mut self, on: bool) -> Self {
        self.histograms = Some(on);
        self
    }
    /// Comma-separated names or patterns of the values to write as histograms.
    pub fn histogram_names(mut self, names: &str) -> Self {
        self.histogram_names = Some(names.to_string());
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        self.period.apply(&mut opts)?;
        if let Some(dir) = &self.output_dir {
            opts.set_path(Opt::OutputDir, dir)?;
        }
        if let Some(on) = self.histograms {
            opts.set_bool(Opt::SummaryHistograms, on)?;
        }
        if let Some(names) = &self.histogram_names {
            opts.set_str(Opt::SummaryHistogramNames, names)?;
        }
        let (_names, pointers) = c_strings("summarized name", &self.summarize)?;
        let list = if pointers.is_empty() { ptr::null() } else { pointers.as_ptr() };
        let writer = self.writer.map_or(ptr::null_mut(), SummaryWriter::as_ptr);
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; names and options are copied; the hook takes its own writer reference.
        let status =
            unsafe { sys::tw_summary_saver_hook_create(&mut raw, list, pointers.len(), opts.as_ptr(), writer) };
        finish(status, raw)
    }
}

/// TF's `ProfilerHook(save_steps=None, save_secs=None, output_dir='')`: every period, traces one run
/// into `<output_dir>/timeline-<step>.json` (Chrome trace format).
#[derive(Default)]
pub struct ProfilerHook {
    period: Period,
    output_dir: Option<PathBuf>,
}

impl ProfilerHook {
    pub fn new() -> ProfilerHook {
        ProfilerHook::default()
    }
    pub fn save_steps(mut self, n: i64) -> Self {
        self.period.steps = Some(n);
        self
    }
    pub fn save_secs(mut self, secs: f64) -> Self {
        self.period.secs = Some(secs);
        self
    }
    pub fn output_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.output_dir = Some(dir.as_ref().to_path_buf());
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        self.period.apply(&mut opts)?;
        if let Some(dir) = &self.output_dir {
            opts.set_path(Opt::OutputDir, dir)?;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; options are copied.
        let status = unsafe { sys::tw_profiler_hook_create(&mut raw, opts.as_ptr()) };
        finish(status, raw)
    }
}

// ------------------------------------------------------------------------------------------------
// FeedFnHook, FinalOpsHook, GlobalStepWaiterHook
// ------------------------------------------------------------------------------------------------

struct FeedState {
    feed: Box<dyn FnMut() -> Result<Vec<Tensor>> + Send>,
    /// The last feeds and their views: the library reads them until the run returns.
    tensors: Vec<Tensor>,
    views: Vec<sys::tw_tensor>,
}

unsafe extern "C" fn feed_trampoline(
    user: *mut c_void,
    feeds: *mut *const sys::tw_tensor,
    n_feeds: *mut usize,
) -> sys::tw_status {
    guard(|| {
        let state = user_of::<FeedState>(user);
        state.tensors = (state.feed)()?;
        state.views = state.tensors.iter().map(Tensor::raw).collect();
        *feeds = if state.views.is_empty() { ptr::null() } else { state.views.as_ptr() };
        *n_feeds = state.views.len();
        Ok(())
    })
}

unsafe extern "C" fn final_step_trampoline(user: *mut c_void, ctx: *mut sys::tw_step_context) -> sys::tw_status {
    guard(|| (user_of::<FinalStep>(user))(&mut StepContext::from_raw(ctx)))
}

type FinalStep = Box<dyn FnMut(&mut StepContext<'_>) -> Result<()> + Send>;
type StepReader = Box<dyn FnMut(&SessionRef<'_>) -> Result<i64> + Send>;

unsafe extern "C" fn global_step_trampoline(
    user: *mut c_void,
    session: *mut sys::tw_session,
    out: *mut i64,
) -> sys::tw_status {
    guard(|| {
        *out = (user_of::<StepReader>(user))(&SessionRef::from_raw(session))?;
        Ok(())
    })
}

/// TF's `GlobalStepWaiterHook(wait_until_step)`: the first run waits until the global step (read by
/// `step_reader`, else the session's own) reaches `wait_until_step`.
pub struct GlobalStepWaiterHook {
    wait_until_step: i64,
    poll_secs: Option<f64>,
    max_secs: Option<f64>,
    reader: Option<StepReader>,
}

impl GlobalStepWaiterHook {
    pub fn new(wait_until_step: i64) -> GlobalStepWaiterHook {
        GlobalStepWaiterHook { wait_until_step, poll_secs: None, max_secs: None, reader: None }
    }
    /// Between reads (default 0.5 s).
    pub fn poll_secs(mut self, secs: f64) -> Self {
        self.poll_secs = Some(secs);
        self
    }
    /// Fail the run with `Code::DeadlineExceeded` after waiting this long (default: forever, as TF).
    pub fn max_secs(mut self, secs: f64) -> Self {
        self.max_secs = Some(secs);
        self
    }
    /// Reads the shared global step (another process advances it).
    pub fn step_reader<F>(mut self, f: F) -> Self
    where
        F: FnMut(&SessionRef<'_>) -> Result<i64> + Send + 'static,
    {
        self.reader = Some(Box::new(f));
        self
    }
    pub fn build(self) -> Result<Hook> {
        let mut opts = Options::new()?;
        if let Some(secs) = self.poll_secs {
            opts.set_f64(Opt::WaitPollSecs, secs)?;
        }
        if let Some(secs) = self.max_secs {
            opts.set_f64(Opt::WaitMaxSecs, secs)?;
        }
        let (callback, user): (Option<sys::tw_global_step_fn>, *mut c_void) = match self.reader {
            Some(f) => (Some(global_step_trampoline), into_user::<StepReader>(f)),
            None => (None, ptr::null_mut()),
        };
        let destroy = if user.is_null() { None } else { Some(destroy_boxed::<StepReader> as sys::tw_destroy_fn) };
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; on success the hook owns `user`.
        let status = unsafe {
            sys::tw_global_step_waiter_hook_create(
                &mut raw,
                self.wait_until_step,
                opts.as_ptr(),
                callback,
                user,
                destroy,
            )
        };
        if status != sys::TW_OK && !user.is_null() {
            // SAFETY: not taken.
            unsafe { reclaim::<StepReader>(user) };
        }
        finish(status, raw)
    }
}

impl Hook {
    /// TF's `FeedFnHook(feed_fn)`: `feed` supplies feeds for every run.
    pub fn feed_fn<F>(feed: F) -> Result<Hook>
    where
        F: FnMut() -> Result<Vec<Tensor>> + Send + 'static,
    {
        let user = into_user(FeedState { feed: Box::new(feed), tensors: Vec::new(), views: Vec::new() });
        let mut raw = ptr::null_mut();
        // SAFETY: on success the hook owns `user`.
        let status = unsafe {
            sys::tw_feed_fn_hook_create(&mut raw, Some(feed_trampoline), user, Some(destroy_boxed::<FeedState>))
        };
        if status != sys::TW_OK {
            // SAFETY: not taken.
            unsafe { reclaim::<FeedState>(user) };
        }
        finish(status, raw)
    }

    /// TF's `FinalOpsHook(final_ops, final_ops_feed_dict)`: at `end`, runs `final_step` once without
    /// hooks with `feeds` (copied now); read what it published with `final_ops_value(s)`.
    pub fn final_ops<F>(feeds: &[View<'_>], final_step: F) -> Result<Hook>
    where
        F: FnMut(&mut StepContext<'_>) -> Result<()> + Send + 'static,
    {
        let raw_feeds: Vec<sys::tw_tensor> = feeds.iter().map(View::raw).collect();
        let boxed: FinalStep = Box::new(final_step);
        let user = into_user(boxed);
        let mut raw = ptr::null_mut();
        // SAFETY: feeds are copied; on success the hook owns `user`.
        let status = unsafe {
            sys::tw_final_ops_hook_create(
                &mut raw,
                raw_feeds.as_ptr(),
                raw_feeds.len(),
                Some(final_step_trampoline),
                user,
                Some(destroy_boxed::<FinalStep>),
            )
        };
        if status != sys::TW_OK {
            // SAFETY: not taken.
            unsafe { reclaim::<FinalStep>(user) };
        }
        finish(status, raw)
    }

    /// A copy of a FinalOpsHook's value `name` after its final step ran (TF's `final_ops_values`);
    /// `FailedPrecondition` before. (Copies: the hook's own values change if a later session runs
    /// the final step again.)
    pub fn final_ops_value(&self, name: &str) -> Result<Tensor> {
        let name = c_string("value name", name)?;
        let mut view = sys::tw_tensor::init();
        // SAFETY: valid pointers; the value is copied before anything else can run the hook.
        check(unsafe { sys::tw_final_ops_hook_get_value(&mut view, self.as_ptr(), name.as_ptr()) })?;
        unsafe { TensorRef::from_raw(view) }.to_owned()
    }

    /// Copies of every value the final step published, in publish order (empty before it ran).
    pub fn final_ops_values(&self) -> Result<Vec<Tensor>> {
        let hook = self.as_ptr();
        // SAFETY: the views are copied at once.
        let views: Vec<TensorRef<'_>> = unsafe {
            crate::list::collect(sys::tw_final_ops_hook_value_count(hook), |i, view| {
                sys::tw_final_ops_hook_value_at(view, hook, i)
            })
        }?;
        views.iter().map(TensorRef::to_owned).collect()
    }
}

/// `StopAtStepHook` with TF's argument names: `StopAtStepHook::last_step(100)`.
pub struct StopAtStepHook;

impl StopAtStepHook {
    pub fn num_steps(n: i64) -> Result<Hook> {
        Hook::stop_at_step(Some(n), None)
    }
    pub fn last_step(step: i64) -> Result<Hook> {
        Hook::stop_at_step(None, Some(step))
    }
}
