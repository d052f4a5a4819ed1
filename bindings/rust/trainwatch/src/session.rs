//! Sessions and the contexts the library lends to hooks and step functions.
use std::ffi::CStr;
use std::marker::PhantomData;
use std::mem;
use std::ops::Deref;
use std::os::raw::c_void;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};
use std::slice;

use crate::builtin::c_path;
use crate::error::{c_string, call, call_in_drop, check, guard, Code, Error, Result};
use crate::hook::Hook;
use crate::list;
use crate::options::Options;
use crate::sys;
use crate::tensor::{Element, Tensor, TensorRef, View};

/// A session as hooks see it (TF's `run_context.session`): the global step, stop requests, variables.
/// Borrowed: valid for `'a`.
#[derive(Debug)]
pub struct SessionRef<'a> {
    raw: *mut sys::tw_session,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> SessionRef<'a> {
    pub(crate) fn from_raw(raw: *mut sys::tw_session) -> SessionRef<'a> {
        SessionRef { raw, _borrow: PhantomData }
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::tw_session {
        self.raw
    }

    /// In `after_run`: an output the step published in this run, by name (TF's
    /// `run_context.session.run(name)`); valid during the callback. Elsewhere `FailedPrecondition`.
    pub fn output(&self, name: &str) -> Result<TensorRef<'_>> {
        let name = c_string("output name", name)?;
        let mut view = sys::tw_tensor::init();
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_session_get_output(&mut view, self.raw, name.as_ptr()) })?;
        // SAFETY: the output lives until the run returns, beyond this callback's borrow of self.
        Ok(unsafe { TensorRef::from_raw(view) })
    }

    /// The current global step (in `after_run`, already the value after the step).
    pub fn global_step(&self) -> i64 {
        // SAFETY: any pointer the library handed out, or NULL (0).
        unsafe { sys::tw_session_global_step(self.raw) }
    }

    /// Set by a hook's or the caller's stop request; also true once closed or failed.
    pub fn should_stop(&self) -> bool {
        // SAFETY: any pointer the library handed out, or NULL.
        unsafe { sys::tw_session_should_stop(self.raw) != 0 }
    }

    /// Requests a stop (the Coordinator's `request_stop`).
    pub fn request_stop(&self) -> Result<()> {
        // SAFETY: as above.
        check(unsafe { sys::tw_session_request_stop(self.raw) })
    }

    pub fn is_chief(&self) -> bool {
        // SAFETY: as above.
        unsafe { sys::tw_session_is_chief(self.raw) != 0 }
    }

    /// Every registered variable (and shard), zero copy, in registration order.
    pub fn variables(&self) -> Result<Vec<TensorRef<'_>>> {
        let raw = self.raw;
        // SAFETY: the views point at the caller's buffers, borrowed by the session for as long as self.
        unsafe {
            list::collect(sys::tw_session_variable_count(raw), |i, view| sys::tw_session_variable_at(view, raw, i))
        }
    }

    /// The names of the session's hooks in the order they run (a MonitoredTrainingSession's
    /// defaults included).
    pub fn hook_names(&self) -> Result<Vec<String>> {
        let n = unsafe { sys::tw_session_hook_count(self.raw) };
        (0..n)
            .map(|i| {
                let mut hook = ptr::null_mut();
                // SAFETY: a live session; the hook is borrowed for the call and its name copied.
                check(unsafe { sys::tw_session_hook_at(&mut hook, self.raw, i) })?;
                Ok(unsafe { std::ffi::CStr::from_ptr(sys::tw_hook_name(hook)) }.to_string_lossy().into_owned())
            })
            .collect()
    }

    /// TF's `scaffold.saver.save(sess, prefix, global_step)` inside the session: the session's own
    /// saver saves the variables and global step to `<prefix>-<global_step>` (`prefix` itself for
    /// `None`) with its lock, state file and retention, no listener (tf-semantics C27). `prefix` must
    /// lie in the session's checkpoint directory (`InvalidArgument` otherwise). Returns the path.
    pub fn save_checkpoint(&self, prefix: impl AsRef<Path>, global_step: Option<i64>) -> Result<PathBuf> {
        let prefix = c_path("prefix", prefix.as_ref())?;
        let mut out = ptr::null();
        // SAFETY: valid pointers; the path is copied before the next call on the session.
        check(unsafe {
            sys::tw_session_save_checkpoint(&mut out, self.raw, prefix.as_ptr(), global_step.unwrap_or(sys::TW_UNSET))
        })?;
        // SAFETY: on success a NUL-terminated string owned by the session.
        Ok(PathBuf::from(unsafe { CStr::from_ptr(out) }.to_string_lossy().as_ref()))
    }

    /// How many times the inner session was created: 1, plus one per recovery.
    pub fn creation_count(&self) -> i64 {
        // SAFETY: any pointer the library handed out, or NULL.
        unsafe { sys::tw_session_creation_count(self.raw) }
    }

    /// Notes a preemption (as SIGTERM would with `Opt::CatchPreemptionSignals`): the run in progress,
    /// or the next, saves a checkpoint and stops cleanly. Only sets a flag.
    pub fn notify_preemption(&self) -> Result<()> {
        // SAFETY: as above; thread-safe in the library.
        check(unsafe { sys::tw_session_notify_preemption(self.raw) })
    }

    /// True once the session stopped because of a preemption.
    pub fn preempted(&self) -> bool {
        // SAFETY: as above.
        unsafe { sys::tw_session_preempted(self.raw) != 0 }
    }

    /// The variable `name` as registered through `Options::variable`, zero copy.
    pub fn variable<T: Element>(&self, name: &str) -> Result<&[T]> {
        let name = c_string("variable name", name)?;
        let mut view = sys::tw_tensor::init();
        // SAFETY: valid pointers; the view points at the caller's buffer, borrowed by the session.
        check(unsafe { sys::tw_session_get_variable(&mut view, self.raw, name.as_ptr()) })?;
        // SAFETY: the buffer lives as long as the session ('v) and so as long as &self.
        unsafe { TensorRef::from_raw(view) }.as_slice::<T>()
    }
}

/// A `MonitoredSession` (recovering from preemption) or `SingularMonitoredSession`. Dropping it
/// without `close` abandons it: no hook hears `end`. `'v` is the borrow of the variables of the
/// options it was made from. Derefs to `SessionRef` for the global step, stop and variables.
///
/// `Send`: it may move to another thread (and run, close or drop there), as the header's thread rules
/// allow: one thread at a time. Its hooks' Rust callbacks are `Send` for that reason; the `Hook`
/// handles stay on their thread, which may drop them or offer them to a new session (refused while
/// this one holds them).
#[derive(Debug)]
pub struct Session<'v> {
    handle: SessionRef<'v>,
    _variables: PhantomData<&'v mut [u8]>,
}

// SAFETY: the library lets one thread at a time use a session, checked by the library itself; `&mut
// self` on every state-changing call and the missing `Sync` keep it to one thread here. What the
// session runs is `Send`: hook callbacks (`SessionRunHook: Send`), the variables (`&'v mut [T]` of
// plain numbers); step closures run on the calling thread.
unsafe impl Send for Session<'_> {}

thread_local! {
    /// Feeds hooks added (`RunContext::add_feed`) to the runs in progress on this thread: the library
    /// reads them until the run returns.
    static RUN_FEEDS: std::cell::RefCell<Vec<Tensor>> = std::cell::RefCell::new(Vec::new());
}

struct StepState<'f, R, F> {
    step: &'f mut F,
    value: Option<R>,
}

/// # Safety
/// `user` is the `StepState` that `Session::run` keeps alive for the call.
unsafe extern "C" fn step_trampoline<R, F>(user: *mut c_void, ctx: *mut sys::tw_step_context) -> sys::tw_status
where
    F: FnMut(&mut StepContext<'_>) -> Result<R>,
{
    guard(|| {
        let state = &mut *(user as *mut StepState<'_, R, F>);
        let value = (state.step)(&mut StepContext::from_raw(ctx))?;
        state.value = Some(value);
        Ok(())
    })
}

type CreateFn = unsafe extern "C" fn(
    *mut *mut sys::tw_session,
    *const sys::tw_options,
    *const *mut sys::tw_hook,
    usize,
) -> sys::tw_status;

impl<'v> Session<'v> {
    /// TF's `MonitoredSession`: `begin` on every hook, restore (chief, from `Opt::CheckpointDir`) or
    /// initialize, `after_create_session` on every hook. `opts` may be `None` (defaults).
    pub fn monitored(opts: Option<&Options<'v>>, hooks: &[&Hook]) -> Result<Session<'v>> {
        Session::create(sys::tw_monitored_session_create, opts, hooks)
    }

    /// TF's `SingularMonitoredSession`: no recovery, always a chief.
    pub fn singular(opts: Option<&Options<'v>>, hooks: &[&Hook]) -> Result<Session<'v>> {
        Session::create(sys::tw_singular_monitored_session_create, opts, hooks)
    }

    /// TF's `MonitoredTrainingSession`: a `MonitoredSession` whose options carry TF's arguments
    /// (`Opt::IsChief`, `CheckpointDir`, `SummaryDir`, `CheckpointEveryNSteps`/`Secs`,
    /// `SummaryEveryNSteps`/`Secs`, `StepCountEveryNSteps`, `MaxWaitSecs`, `MaxToKeep`, …). A chief
    /// runs `chief_only_hooks`, the default StepCounterHook, SummarySaverHook and CheckpointSaverHook
    /// (each when its frequency and directory are set), then `hooks`; a worker runs `hooks` only.
    pub fn monitored_training(
        opts: Option<&Options<'v>>,
        hooks: &[&Hook],
        chief_only_hooks: &[&Hook],
    ) -> Result<Session<'v>> {
        let raw_hooks: Vec<*mut sys::tw_hook> = hooks.iter().map(|h| h.as_ptr()).collect();
        let raw_chief: Vec<*mut sys::tw_hook> = chief_only_hooks.iter().map(|h| h.as_ptr()).collect();
        let opts = opts.map_or(ptr::null(), Options::as_ptr);
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers for the call; the session takes its own hook references.
        call(|| unsafe {
            sys::tw_monitored_training_session_create(
                &mut raw,
                opts,
                raw_hooks.as_ptr(),
                raw_hooks.len(),
                raw_chief.as_ptr(),
                raw_chief.len(),
            )
        })?;
        Ok(Session { handle: SessionRef::from_raw(raw), _variables: PhantomData })
    }

    fn create(create: CreateFn, opts: Option<&Options<'v>>, hooks: &[&Hook]) -> Result<Session<'v>> {
        let raw_hooks: Vec<*mut sys::tw_hook> = hooks.iter().map(|h| h.as_ptr()).collect();
        let opts = opts.map_or(ptr::null(), Options::as_ptr);
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers for the call; the session takes its own hook references.
        call(|| unsafe { create(&mut raw, opts, raw_hooks.as_ptr(), raw_hooks.len()) })?;
        Ok(Session { handle: SessionRef::from_raw(raw), _variables: PhantomData })
    }

    /// One step with hooks: `before_run` on every hook → `step` → global step += 1 → fetches →
    /// `after_run` on every hook. Returns what the step returned (the last time it ran: recovery may
    /// run it again). `Err` with `Code::OutOfRange` / `StopIteration` is a clean end of training.
    pub fn run<R, F>(&mut self, feeds: &[View<'_>], mut step: F) -> Result<R>
    where
        F: FnMut(&mut StepContext<'_>) -> Result<R>,
    {
        self.run_with(sys::tw_session_run, feeds, &mut step)
    }

    /// The same step without hooks and without touching the global step (evaluation, iterator
    /// resets); recovery still applies.
    pub fn run_without_hooks<R, F>(&mut self, feeds: &[View<'_>], mut step: F) -> Result<R>
    where
        F: FnMut(&mut StepContext<'_>) -> Result<R>,
    {
        self.run_with(sys::tw_session_run_without_hooks, feeds, &mut step)
    }

    fn run_with<R, F>(
        &mut self,
        run: unsafe extern "C" fn(
            *mut sys::tw_session,
            *const sys::tw_tensor,
            usize,
            Option<sys::tw_step_fn>,
            *mut c_void,
        ) -> sys::tw_status,
        feeds: &[View<'_>],
        step: &mut F,
    ) -> Result<R>
    where
        F: FnMut(&mut StepContext<'_>) -> Result<R>,
    {
        let raw_feeds: Vec<sys::tw_tensor> = feeds.iter().map(View::raw).collect();
        let mut state = StepState { step, value: None };
        let user = &mut state as *mut StepState<'_, R, F> as *mut c_void;
        let hook_feeds = RUN_FEEDS.with(|feeds| feeds.borrow().len());
        // SAFETY: feeds and state outlive the call; the trampoline matches R and F.
        let result = call(|| unsafe {
            run(self.handle.raw, raw_feeds.as_ptr(), raw_feeds.len(), Some(step_trampoline::<R, F>), user)
        });
        RUN_FEEDS.with(|feeds| feeds.borrow_mut().truncate(hook_feeds)); // this run's hook feeds
        result?;
        state.value.ok_or_else(|| Error::new(Code::Internal, "the run succeeded without running the step"))
    }

    /// Closes the session: `end` on every hook (skipped after a failed run).
    pub fn close(&mut self) -> Result<()> {
        // SAFETY: a live session.
        call(|| unsafe { sys::tw_session_close(self.handle.raw) })
    }

    /// Sets the global step (outside a step; inside one use `StepContext::set_global_step`).
    pub fn set_global_step(&mut self, value: i64) -> Result<()> {
        // SAFETY: a live session.
        check(unsafe { sys::tw_session_set_global_step(self.handle.raw, value) })
    }
}

impl<'v> Deref for Session<'v> {
    type Target = SessionRef<'v>;
    fn deref(&self) -> &SessionRef<'v> {
        &self.handle
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once; may drop hooks whose last reference it held. It cannot be
        // refused: no callback of this session runs while it is dropped (the borrow rules see to it).
        call_in_drop(|| {
            let status = unsafe { sys::tw_session_destroy(self.handle.raw) };
            debug_assert_eq!(status, sys::TW_OK, "tw_session_destroy refused to drop a Session");
        });
    }
}

/// TF's `SessionRunContext` plus this hook's `SessionRunArgs`/`SessionRunValues`, lent to
/// `before_run` and `after_run`.
#[derive(Debug)]
pub struct RunContext<'a> {
    raw: NonNull<sys::tw_run_context>,
    _borrow: PhantomData<&'a mut ()>,
}

impl<'a> RunContext<'a> {
    /// # Safety
    /// `raw` is the context the library passed to the running callback.
    pub(crate) unsafe fn from_raw(raw: *mut sys::tw_run_context) -> RunContext<'a> {
        RunContext { raw: NonNull::new_unchecked(raw), _borrow: PhantomData }
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::tw_run_context {
        self.raw.as_ptr()
    }

    /// The names this hook requested so far in this run, in request order: after `inner.before_run`
    /// in a wrapper, what the built-in requested (TF's `SessionRunArgs` of `super().before_run`).
    pub fn requests(&self) -> Result<Vec<String>> {
        let ctx = self.raw.as_ptr();
        // SAFETY: a live context; each string lives until the next request and is copied at once.
        unsafe {
            list::collect(sys::tw_run_context_request_count(ctx), |i, name| {
                sys::tw_run_context_request_at(name, ctx, i)
            })
        }
    }

    /// In `before_run`: fetch `name` (an output, a variable, "global_step", or a glob pattern) for
    /// this hook's `after_run`.
    pub fn request_fetch(&mut self, name: &str) -> Result<()> {
        let name = c_string("fetch name", name)?;
        // SAFETY: a live context; the name is copied.
        check(unsafe { sys::tw_run_context_request_fetch(self.raw.as_ptr(), name.as_ptr()) })
    }

    /// TF's `run_context.request_stop()`: latched after every hook's `after_run`.
    pub fn request_stop(&mut self) -> Result<()> {
        // SAFETY: a live context.
        check(unsafe { sys::tw_run_context_request_stop(self.raw.as_ptr()) })
    }

    pub fn stop_requested(&self) -> bool {
        // SAFETY: a live context.
        unsafe { sys::tw_run_context_stop_requested(self.raw.as_ptr()) != 0 }
    }

    /// In `before_run`: feeds `feed` to this run (TF's `SessionRunArgs(feed_dict=…)`). The tensor is
    /// kept until the run returns.
    pub fn add_feed(&mut self, feed: Tensor) -> Result<()> {
        let raw = feed.raw();
        // SAFETY: the view is copied; the data lives in RUN_FEEDS until the run returns.
        check(unsafe { sys::tw_run_context_add_feed(self.raw.as_ptr(), &raw) })?;
        RUN_FEEDS.with(|feeds| feeds.borrow_mut().push(feed));
        Ok(())
    }

    /// The feeds the caller passed to `Session::run` (TF's `original_args.feed_dict`).
    pub fn original_feeds(&self) -> Result<Vec<TensorRef<'_>>> {
        let ctx = self.raw.as_ptr();
        // SAFETY: the views are valid until the run returns, so for the borrow of self.
        unsafe {
            list::collect(sys::tw_run_context_original_feed_count(ctx), |i, view| {
                sys::tw_run_context_original_feed(view, ctx, i)
            })
        }
    }

    /// The running session.
    pub fn session(&self) -> SessionRef<'_> {
        // SAFETY: a live context.
        SessionRef::from_raw(unsafe { sys::tw_run_context_session(self.raw.as_ptr()) })
    }

    /// In `after_run`: the value fetched as `name` (valid during the callback).
    pub fn result(&self, name: &str) -> Result<TensorRef<'_>> {
        let name = c_string("result name", name)?;
        let mut view = sys::tw_tensor::init();
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_run_context_get_result(&mut view, self.raw.as_ptr(), name.as_ptr()) })?;
        // SAFETY: valid until the run returns, so for the borrow of self.
        Ok(unsafe { TensorRef::from_raw(view) })
    }

    /// In `after_run`: every resolved value, in request order.
    pub fn results(&self) -> Result<Vec<TensorRef<'_>>> {
        let ctx = self.raw.as_ptr();
        // SAFETY: a live context; the views are valid until the run returns, so for the borrow of self.
        unsafe {
            list::collect(sys::tw_run_context_result_count(ctx), |i, view| sys::tw_run_context_result_at(view, ctx, i))
        }
    }
}

/// What the step function sees: feeds, requested names, outputs to publish, the global step.
#[derive(Debug)]
pub struct StepContext<'a> {
    raw: NonNull<sys::tw_step_context>,
    _borrow: PhantomData<&'a mut ()>,
}

impl<'a> StepContext<'a> {
    /// # Safety
    /// `raw` is the context the library passed to the running step.
    pub(crate) unsafe fn from_raw(raw: *mut sys::tw_step_context) -> StepContext<'a> {
        StepContext { raw: NonNull::new_unchecked(raw), _borrow: PhantomData }
    }

    /// The feed `name` (hooks' feeds and the caller's, merged).
    pub fn feed(&self, name: &str) -> Result<TensorRef<'_>> {
        let name = c_string("feed name", name)?;
        let mut view = sys::tw_tensor::init();
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_step_context_get_feed(&mut view, self.raw.as_ptr(), name.as_ptr()) })?;
        // SAFETY: valid until the step returns.
        Ok(unsafe { TensorRef::from_raw(view) })
    }

    /// Every feed of this run.
    pub fn feeds(&self) -> Result<Vec<TensorRef<'_>>> {
        let ctx = self.raw.as_ptr();
        // SAFETY: a live context; the views are valid until the step returns.
        unsafe {
            list::collect(sys::tw_step_context_feed_count(ctx), |i, view| sys::tw_step_context_feed_at(view, ctx, i))
        }
    }

    /// Whether a hook asked for `name` in this run, so the step can skip computing it otherwise.
    pub fn is_requested(&self, name: &str) -> bool {
        match c_string("name", name) {
            // SAFETY: valid pointers.
            Ok(name) => unsafe { sys::tw_step_context_is_requested(self.raw.as_ptr(), name.as_ptr()) != 0 },
            Err(_) => false,
        }
    }

    /// The names and patterns hooks requested in this run.
    pub fn requested(&self) -> Result<Vec<String>> {
        let ctx = self.raw.as_ptr();
        // SAFETY: a live context; each string is copied at once.
        unsafe {
            list::collect(sys::tw_step_context_requested_count(ctx), |i, name| {
                sys::tw_step_context_requested_at(name, ctx, i)
            })
        }
    }

    /// Publishes an output for hooks to fetch; the library copies it.
    pub fn publish(&mut self, output: &View<'_>) -> Result<()> {
        let raw = output.raw();
        // SAFETY: the view is valid for the call and copied.
        check(unsafe { sys::tw_step_context_publish_copy(self.raw.as_ptr(), &raw) })
    }

    /// Publishes an output without copying it.
    ///
    /// # Safety
    /// The view's data must stay valid and unchanged until the run returns (hooks read it in
    /// `after_run`): memory the step's closure borrows from outside, not a local.
    pub unsafe fn publish_no_copy(&mut self, output: &View<'_>) -> Result<()> {
        let raw = output.raw();
        check(sys::tw_step_context_publish(self.raw.as_ptr(), &raw))
    }

    /// Publishes a scalar output.
    pub fn publish_scalar<T: Element>(&mut self, name: &str, value: T) -> Result<()> {
        self.publish(&View::scalar(name, &value)?)
    }

    /// The global step at the start of this run.
    pub fn global_step(&self) -> i64 {
        // SAFETY: a live context.
        unsafe { sys::tw_step_context_global_step(self.raw.as_ptr()) }
    }

    /// Sets the global step to `value` when the step succeeds, instead of the automatic +1.
    pub fn set_global_step(&mut self, value: i64) -> Result<()> {
        // SAFETY: a live context.
        check(unsafe { sys::tw_step_context_set_global_step(self.raw.as_ptr(), value) })
    }

    /// TF's `step_context.request_stop()`: the error to return from the step (`Code::StopIteration`,
    /// a clean end): `return Err(ctx.request_stop());`.
    pub fn request_stop(&mut self) -> Error {
        // SAFETY: a live context.
        Error::last(unsafe { sys::tw_step_context_request_stop(self.raw.as_ptr()) })
    }

    /// The variable `name`, to update in place (zero copy).
    pub fn variable_mut<T: Element>(&mut self, name: &str) -> Result<&mut [T]> {
        let c_name = c_string("variable name", name)?;
        let mut view = sys::tw_tensor::init();
        // SAFETY: valid pointers.
        check(unsafe {
            let session = sys::tw_step_context_session(self.raw.as_ptr());
            sys::tw_session_get_variable(&mut view, session, c_name.as_ptr())
        })?;
        // SAFETY: variables are contiguous buffers the session borrows mutably for 'v; the exclusive
        // borrow of self keeps this the only reference handed out during the step.
        let elements = unsafe { TensorRef::from_raw(view) }.as_slice::<T>()?;
        let (data, len) = (elements.as_ptr() as *mut T, elements.len());
        Ok(if len == 0 { &mut [] } else { unsafe { slice::from_raw_parts_mut(data, len) } })
    }
}

const _: () = assert!(mem::size_of::<sys::tw_tensor>() == 56); // TW_TENSOR_SIZE_V2
