//! Hooks: the `SessionRunHook` trait for hooks written in Rust, and `Hook`, the library's reference
//! counted hook object (custom or built-in).
use std::ffi::CStr;
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{c_string, call, call_in_drop, check, guard, Code, Error, Result};
use crate::options::Options;
use crate::session::{RunContext, SessionRef};
use crate::sys;

/// TF's `SessionRunHook`. Every method has a default that does nothing. Returning `Err` fails the
/// operation the callback runs in (the session run, creation or close) with that error; a panic is
/// caught before it reaches C, fails the operation with `Code::CallbackFailed`, and is resumed from
/// the session call (`Session::run`, …) once the library has returned. A hook is `Send`: it runs on
/// whichever thread runs its session (`Session` is `Send`), and is dropped on the last to let it go.
pub trait SessionRunHook: Send {
    /// Once per session, before it is created.
    fn begin(&mut self, _session: &SessionRef<'_>) -> Result<()> {
        Ok(())
    }
    /// After every (re-)creation of the inner session (restored or initialized).
    fn after_create_session(&mut self, _session: &SessionRef<'_>) -> Result<()> {
        Ok(())
    }
    /// At the start of every run: request fetches, request a stop.
    fn before_run(&mut self, _ctx: &mut RunContext<'_>) -> Result<()> {
        Ok(())
    }
    /// After a successful step, with the results this hook requested.
    fn after_run(&mut self, _ctx: &mut RunContext<'_>) -> Result<()> {
        Ok(())
    }
    /// On close, when no run failed.
    fn end(&mut self, _session: &SessionRef<'_>) -> Result<()> {
        Ok(())
    }
    /// Instead of `end`, once, when a run or the session's creation failed with `error`.
    fn on_error(&mut self, _session: &SessionRef<'_>, _error: Code) {}
}

/// TF's "subclass a built-in hook" (`class MyHook(tf.train.NanTensorHook)`), by composition: the
/// callbacks of a hook made by `Hook::wrap`. Each method gets `inner`, the wrapped hook, whose methods
/// are TF's `super()`: every default calls it, so an override that calls `inner` keeps the built-in
/// behaviour and one that does not skips it. An error `inner` returns is the override's to return or
/// to swallow. Panics are handled as in `SessionRunHook`, and, like it, the callbacks are `Send`.
pub trait HookCallbacks: Send {
    fn begin(&mut self, inner: &Super, session: &SessionRef<'_>) -> Result<()> {
        inner.begin(session)
    }
    fn after_create_session(&mut self, inner: &Super, session: &SessionRef<'_>) -> Result<()> {
        inner.after_create_session(session)
    }
    fn before_run(&mut self, inner: &Super, ctx: &mut RunContext<'_>) -> Result<()> {
        inner.before_run(ctx)
    }
    fn after_run(&mut self, inner: &Super, ctx: &mut RunContext<'_>) -> Result<()> {
        inner.after_run(ctx)
    }
    fn end(&mut self, inner: &Super, session: &SessionRef<'_>) -> Result<()> {
        inner.end(session)
    }
    fn on_error(&mut self, inner: &Super, session: &SessionRef<'_>, error: Code) {
        inner.on_error(session, error)
    }
}

/// The hook a wrapper wraps, as its callbacks see it: TF's `super()`. Each method runs the inner
/// hook's callback of the same name; it is valid only inside the wrapper's callback of that name,
/// with the session or context that callback received (else `Code::FailedPrecondition`). Fetches,
/// feeds and stop requests the inner makes act for the wrapper: after `inner.before_run(ctx)`,
/// `ctx.requests()` lists what the built-in requested, and `after_run` reads its results.
#[derive(Debug)]
pub struct Super {
    raw: NonNull<sys::tw_hook>,
}

impl Super {
    pub fn begin(&self, session: &SessionRef<'_>) -> Result<()> {
        // SAFETY: the inner hook lives as long as the wrapper; the library checks where it is called.
        call(|| unsafe { sys::tw_hook_call_begin(self.raw.as_ptr(), session.as_ptr()) })
    }
    pub fn after_create_session(&self, session: &SessionRef<'_>) -> Result<()> {
        // SAFETY: as above.
        call(|| unsafe { sys::tw_hook_call_after_create_session(self.raw.as_ptr(), session.as_ptr()) })
    }
    pub fn before_run(&self, ctx: &mut RunContext<'_>) -> Result<()> {
        // SAFETY: as above.
        call(|| unsafe { sys::tw_hook_call_before_run(self.raw.as_ptr(), ctx.as_ptr()) })
    }
    pub fn after_run(&self, ctx: &mut RunContext<'_>) -> Result<()> {
        // SAFETY: as above.
        call(|| unsafe { sys::tw_hook_call_after_run(self.raw.as_ptr(), ctx.as_ptr()) })
    }
    pub fn end(&self, session: &SessionRef<'_>) -> Result<()> {
        // SAFETY: as above.
        call(|| unsafe { sys::tw_hook_call_end(self.raw.as_ptr(), session.as_ptr()) })
    }
    /// Cannot fail; a misplaced call does nothing.
    pub fn on_error(&self, session: &SessionRef<'_>, error: Code) {
        // SAFETY: as above.
        unsafe { sys::tw_hook_call_on_error(self.raw.as_ptr(), session.as_ptr(), error.status()) }
    }
    pub fn name(&self) -> &str {
        // SAFETY: valid while the hook lives.
        unsafe { CStr::from_ptr(sys::tw_hook_name(self.raw.as_ptr())) }.to_str().unwrap_or("")
    }
}

struct Wrapped {
    inner: Super,
    callbacks: Box<dyn HookCallbacks>,
}

/// # Safety (wrapper trampolines)
/// `user` is the `*mut Wrapped` made by `Hook::wrap`, alive until `destroy`; one thread at a time.
unsafe fn wrapped_of<'a>(user: *mut c_void) -> &'a mut Wrapped {
    &mut *(user as *mut Wrapped)
}

unsafe extern "C" fn wrapped_begin(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
    guard(|| {
        let w = wrapped_of(user);
        w.callbacks.begin(&w.inner, &SessionRef::from_raw(session))
    })
}
unsafe extern "C" fn wrapped_after_create_session(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
    guard(|| {
        let w = wrapped_of(user);
        w.callbacks.after_create_session(&w.inner, &SessionRef::from_raw(session))
    })
}
unsafe extern "C" fn wrapped_before_run(user: *mut c_void, ctx: *mut sys::tw_run_context) -> sys::tw_status {
    guard(|| {
        let w = wrapped_of(user);
        w.callbacks.before_run(&w.inner, &mut RunContext::from_raw(ctx))
    })
}
unsafe extern "C" fn wrapped_after_run(user: *mut c_void, ctx: *mut sys::tw_run_context) -> sys::tw_status {
    guard(|| {
        let w = wrapped_of(user);
        w.callbacks.after_run(&w.inner, &mut RunContext::from_raw(ctx))
    })
}
unsafe extern "C" fn wrapped_end(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
    guard(|| {
        let w = wrapped_of(user);
        w.callbacks.end(&w.inner, &SessionRef::from_raw(session))
    })
}
unsafe extern "C" fn wrapped_on_error(user: *mut c_void, session: *mut sys::tw_session, error: sys::tw_status) {
    let code = Code::from_status(error).unwrap_or(Code::Unknown);
    guard(|| {
        let w = wrapped_of(user);
        w.callbacks.on_error(&w.inner, &SessionRef::from_raw(session), code);
        Ok(())
    });
}
unsafe extern "C" fn wrapped_destroy(user: *mut c_void) {
    guard(|| {
        drop(Box::from_raw(user as *mut Wrapped));
        Ok(())
    });
}

/// A hook to pass to a session. The session takes its own reference, so a `Hook` may be dropped
/// before or after the sessions that use it; a Rust hook is dropped when the last reference goes.
/// A hook belongs to one open session at a time.
#[derive(Debug)]
pub struct Hook {
    raw: NonNull<sys::tw_hook>,
}

type BoxedHook = Box<dyn SessionRunHook>;

/// # Safety (all trampolines)
/// `user` is the `*mut BoxedHook` made by `Hook::new`, alive until `destroy`; the library calls a
/// hook from one thread at a time and never re-enters it.
unsafe fn hook_of<'a>(user: *mut c_void) -> &'a mut BoxedHook {
    &mut *(user as *mut BoxedHook)
}

unsafe extern "C" fn begin_trampoline(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
    guard(|| hook_of(user).begin(&SessionRef::from_raw(session)))
}
unsafe extern "C" fn after_create_session_trampoline(
    user: *mut c_void,
    session: *mut sys::tw_session,
) -> sys::tw_status {
    guard(|| hook_of(user).after_create_session(&SessionRef::from_raw(session)))
}
unsafe extern "C" fn before_run_trampoline(user: *mut c_void, ctx: *mut sys::tw_run_context) -> sys::tw_status {
    guard(|| hook_of(user).before_run(&mut RunContext::from_raw(ctx)))
}
unsafe extern "C" fn after_run_trampoline(user: *mut c_void, ctx: *mut sys::tw_run_context) -> sys::tw_status {
    guard(|| hook_of(user).after_run(&mut RunContext::from_raw(ctx)))
}
unsafe extern "C" fn end_trampoline(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
    guard(|| hook_of(user).end(&SessionRef::from_raw(session)))
}
unsafe extern "C" fn on_error_trampoline(user: *mut c_void, session: *mut sys::tw_session, error: sys::tw_status) {
    let code = Code::from_status(error).unwrap_or(Code::Unknown);
    guard(|| {
        hook_of(user).on_error(&SessionRef::from_raw(session), code);
        Ok(())
    });
}
unsafe extern "C" fn destroy_trampoline(user: *mut c_void) {
    guard(|| {
        drop(Box::from_raw(user as *mut BoxedHook));
        Ok(())
    });
}

impl Hook {
    /// A hook written in Rust; `name` appears in the library's messages.
    pub fn new<H: SessionRunHook + 'static>(name: &str, hook: H) -> Result<Hook> {
        let name = c_string("hook name", name)?;
        let callbacks = sys::tw_hook_callbacks {
            struct_size: std::mem::size_of::<sys::tw_hook_callbacks>() as u32,
            begin: Some(begin_trampoline),
            after_create_session: Some(after_create_session_trampoline),
            before_run: Some(before_run_trampoline),
            after_run: Some(after_run_trampoline),
            end: Some(end_trampoline),
            on_error: Some(on_error_trampoline),
            destroy: Some(destroy_trampoline),
        };
        let boxed: BoxedHook = Box::new(hook);
        let user = Box::into_raw(Box::new(boxed));
        let mut raw = ptr::null_mut();
        // SAFETY: the table is copied; on success the library owns `user` and frees it through
        // destroy_trampoline, on failure it does not take it.
        let status = unsafe { sys::tw_hook_create(&mut raw, name.as_ptr(), &callbacks, user as *mut c_void) };
        if status != sys::TW_OK {
            // SAFETY: not taken by the library.
            drop(unsafe { Box::from_raw(user) });
            return Err(Error::last(status));
        }
        Hook::from_created(raw)
    }

    /// TF's subclass of a built-in hook: a hook that runs `callbacks` in place of `inner`'s callbacks
    /// (see `HookCallbacks`), named as `inner`. It keeps `inner` alive; pass the wrapper — not `inner`
    /// as well — to the session (listing both, or wrapping one hook twice in a session, is
    /// `InvalidArgument`). A hook that overrides nothing is just `inner`: pass `inner` itself.
    pub fn wrap<C: HookCallbacks + 'static>(inner: &Hook, callbacks: C) -> Result<Hook> {
        Hook::wrap_inner(None, inner, Box::new(callbacks))
    }

    /// `wrap` with a name of its own for messages.
    pub fn wrap_named<C: HookCallbacks + 'static>(name: &str, inner: &Hook, callbacks: C) -> Result<Hook> {
        let name = c_string("hook name", name)?;
        Hook::wrap_inner(Some(name), inner, Box::new(callbacks))
    }

    fn wrap_inner(name: Option<std::ffi::CString>, inner: &Hook, callbacks: Box<dyn HookCallbacks>) -> Result<Hook> {
        let table = sys::tw_hook_callbacks {
            struct_size: std::mem::size_of::<sys::tw_hook_callbacks>() as u32,
            begin: Some(wrapped_begin),
            after_create_session: Some(wrapped_after_create_session),
            before_run: Some(wrapped_before_run),
            after_run: Some(wrapped_after_run),
            end: Some(wrapped_end),
            on_error: Some(wrapped_on_error),
            destroy: Some(wrapped_destroy),
        };
        let user = Box::into_raw(Box::new(Wrapped { inner: Super { raw: inner.raw }, callbacks }));
        let name_ptr = name.as_ref().map_or(ptr::null(), |name| name.as_ptr());
        let mut raw = ptr::null_mut();
        // SAFETY: the table and name are copied; the wrapper takes its own reference to inner, which
        // keeps `Super::raw` valid for as long as `user` lives. On success the library owns `user`
        // and frees it through wrapped_destroy; on failure it does not take it.
        let status = unsafe { sys::tw_hook_wrap(&mut raw, name_ptr, inner.as_ptr(), &table, user as *mut c_void) };
        if status != sys::TW_OK {
            // SAFETY: not taken by the library.
            drop(unsafe { Box::from_raw(user) });
            return Err(Error::last(status));
        }
        Hook::from_created(raw)
    }

    /// TF's `StopAtStepHook(num_steps=…, last_step=…)`: exactly one of them.
    pub fn stop_at_step(num_steps: Option<i64>, last_step: Option<i64>) -> Result<Hook> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe {
            sys::tw_stop_at_step_hook_create(
                &mut raw,
                num_steps.unwrap_or(sys::TW_UNSET),
                last_step.unwrap_or(sys::TW_UNSET),
            )
        })?;
        Hook::from_created(raw)
    }

    /// TF's `NanTensorHook(loss_tensor, fail_on_nan_loss)`: a NaN in `loss` fails the run with
    /// `Code::NanLoss` (or, with `fail_on_nan_loss = false`, requests a stop).
    pub fn nan_tensor(loss: &str, fail_on_nan_loss: bool) -> Result<Hook> {
        let loss = c_string("loss name", loss)?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; the name is copied.
        check(unsafe { sys::tw_nan_tensor_hook_create(&mut raw, loss.as_ptr(), fail_on_nan_loss as c_int) })?;
        Hook::from_created(raw)
    }

    /// TF's `CheckpointSaverHook(checkpoint_dir, save_secs | save_steps)`: the timer, basename and
    /// async mode come from `opts` (`Opt::EveryNSteps` / `EveryNSecs`, …).
    pub fn checkpoint_saver(checkpoint_dir: impl AsRef<Path>, opts: &Options<'_>) -> Result<Hook> {
        crate::builtin::checkpoint_saver_hook(checkpoint_dir.as_ref(), opts, &[])
    }

    pub(crate) fn from_created(raw: *mut sys::tw_hook) -> Result<Hook> {
        NonNull::new(raw)
            .map(|raw| Hook { raw })
            .ok_or_else(|| Error::new(Code::Internal, "the library returned a NULL hook"))
    }

    pub fn name(&self) -> &str {
        // SAFETY: valid while the hook lives.
        unsafe { CStr::from_ptr(sys::tw_hook_name(self.raw.as_ptr())) }.to_str().unwrap_or("")
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::tw_hook {
        self.raw.as_ptr()
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        // SAFETY: the caller's reference, released once; may run destroy_trampoline.
        call_in_drop(|| unsafe { sys::tw_hook_destroy(self.raw.as_ptr()) });
    }
}
