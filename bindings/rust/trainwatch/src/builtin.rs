//! TF's built-in hooks, each made by a builder (`NanTensorHook::new("loss").action(…).build()`) whose
//! setters mirror TF's constructor arguments; `build` checks them as TF does and returns the `Hook`.
use std::ffi::CString;
use std::os::raw::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::ptr;

use crate::callback::{hand_over, user_of};
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

/// A builder's setter: `fn NAME(mut self, value: TYPE) -> Self` that stores `Some(value)` in the
/// field; `path` takes `impl AsRef<Path>` and stores a `PathBuf`.
macro_rules! setter {
    ($(#[$doc:meta])* $name:ident: path => $($field:ident).+) => {
        $(#[$doc])*
        pub fn $name(mut self, dir: impl AsRef<Path>) -> Self {
            self.$($field).+ = Some(dir.as_ref().to_path_buf());
            self
        }
    };
    ($(#[$doc:meta])* $name:ident: $ty:ty => $($field:ident).+) => {
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.$($field).+ = Some(value);
            self
        }
    };
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
    setter!(save_steps: i64 => period.steps);
    setter!(save_secs: f64 => period.secs);
    /// Default "model.ckpt".
    pub fn checkpoint_basename(mut self, basename: &str) -> Self {
        self.basename = Some(basename.to_string());
        self
    }
    setter!(
        /// Default true: copy, then compress and write in the background.
        async_checkpoint: bool => async_save
    );
    setter!(
        /// The saver's max_to_keep (default 5).
        max_to_keep: i64 => max_to_keep
    );
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
    setter!(
        /// Also treat ±Inf as a divergence (default true; TF's hook sees only NaN).
        detect_inf: bool => detect_inf
    );
    setter!(
        /// Check only runs starting at a multiple of `n` (default 1).
        every_n_steps: i64 => every_n_steps
    );
    setter!(
        /// `NanAction::Rollback`: how many rollbacks before failing (default 3).
        max_rollbacks: i64 => max_rollbacks
    );
    setter!(
        /// `NanAction::Rollback`: the directory to roll back from.
        checkpoint_dir: path => checkpoint_dir
    );
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
        // SAFETY: valid pointers; names and options are copied; on success the hook owns `user`.
        let status = hand_over(self.on_nan, nan_trampoline as sys::tw_nan_fn, |callback, user, destroy| unsafe {
            sys::tw_nan_tensor_hook_create_with_options(
                &mut raw,
                pointers.as_ptr(),
                pointers.len(),
                opts.as_ptr(),
                callback,
                user,
                destroy,
            )
        });
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
    setter!(every_n_iter: i64 => period.steps);
    setter!(every_n_secs: f64 => period.secs);
    setter!(at_end: bool => at_end);
    setter!(
        /// Values of more elements are summarised (default 32).
        max_elements: i64 => max_elements
    );
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
        let mut raw = ptr::null_mut();
        let trampoline = format_trampoline as sys::tw_log_formatter_fn;
        // SAFETY: valid pointers; names, tags and options are copied; on success the hook owns `user`.
        let status = hand_over(self.formatter, trampoline, |callback, user, destroy| unsafe {
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
        });
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
    setter!(every_n_steps: i64 => period.steps);
    setter!(
        /// Counts by time instead of the default 100 steps.
        every_n_secs: f64 => period.secs
    );
    setter!(output_dir: path => output_dir);
    setter!(summary_writer: &'w SummaryWriter => writer);
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
    setter!(save_steps: i64 => period.steps);
    setter!(save_secs: f64 => period.secs);
    setter!(output_dir: path => output_dir);
    setter!(summary_writer: &'w SummaryWriter => writer);
    setter!(
        /// Write values of more than one element as histograms (default true, for the names asked for).
        histograms: bool => histograms
    );
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
    setter!(save_steps: i64 => period.steps);
    setter!(save_secs: f64 => period.secs);
    setter!(output_dir: path => output_dir);
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
    setter!(
        /// Between reads (default 0.5 s).
        poll_secs: f64 => poll_secs
    );
    setter!(
        /// Fail the run with `Code::DeadlineExceeded` after waiting this long (default: forever, as TF).
        max_secs: f64 => max_secs
    );
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
        let mut raw = ptr::null_mut();
        let trampoline = global_step_trampoline as sys::tw_global_step_fn;
        // SAFETY: valid pointers; on success the hook owns `user`.
        let status = hand_over(self.reader, trampoline, |callback, user, destroy| unsafe {
            sys::tw_global_step_waiter_hook_create(
                &mut raw,
                self.wait_until_step,
                opts.as_ptr(),
                callback,
                user,
                destroy,
            )
        });
        finish(status, raw)
    }
}

impl Hook {
    /// TF's `FeedFnHook(feed_fn)`: `feed` supplies feeds for every run.
    pub fn feed_fn<F>(feed: F) -> Result<Hook>
    where
        F: FnMut() -> Result<Vec<Tensor>> + Send + 'static,
    {
        let state = FeedState { feed: Box::new(feed), tensors: Vec::new(), views: Vec::new() };
        let mut raw = ptr::null_mut();
        // SAFETY: on success the hook owns `user`.
        let status = hand_over(Some(state), feed_trampoline as sys::tw_feed_fn, |callback, user, destroy| unsafe {
            sys::tw_feed_fn_hook_create(&mut raw, callback, user, destroy)
        });
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
        let mut raw = ptr::null_mut();
        // SAFETY: feeds are copied; on success the hook owns `user`.
        let status =
            hand_over(Some(boxed), final_step_trampoline as sys::tw_step_fn, |callback, user, destroy| unsafe {
                sys::tw_final_ops_hook_create(&mut raw, raw_feeds.as_ptr(), raw_feeds.len(), callback, user, destroy)
            });
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
