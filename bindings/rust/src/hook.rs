//! Hooks: the `SessionRunHook` trait for hooks written in Rust, and `Hook`, the library's reference
//! counted hook object (custom or built-in).
use std::ffi::CStr;
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{c_string, call_in_drop, check, guard, Code, Error, Result};
use crate::options::Options;
use crate::session::{RunContext, SessionRef};
use crate::sys;

/// TF's `SessionRunHook`. Every method has a default that does nothing. Returning `Err` fails the
/// operation the callback runs in (the session run, creation or close) with that error; a panic is
/// caught before it reaches C, fails the operation with `Code::CallbackFailed`, and is resumed from
/// the session call (`Session::run`, …) once the library has returned.
pub trait SessionRunHook {
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
unsafe extern "C" fn after_create_session_trampoline(user: *mut c_void, session: *mut sys::tw_session) -> sys::tw_status {
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

    /// TF's `StopAtStepHook(num_steps=…, last_step=…)`: exactly one of them.
    pub fn stop_at_step(num_steps: Option<i64>, last_step: Option<i64>) -> Result<Hook> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe {
            sys::tw_stop_at_step_hook_create(&mut raw, num_steps.unwrap_or(sys::TW_UNSET), last_step.unwrap_or(sys::TW_UNSET))
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
    /// async mode come from `opts` (`Opt::SaveCheckpointSteps` / `SaveCheckpointSecs`, …).
    pub fn checkpoint_saver(checkpoint_dir: impl AsRef<Path>, opts: &Options<'_>) -> Result<Hook> {
        let dir = checkpoint_dir.as_ref();
        let dir = c_string("checkpoint_dir", dir.to_str().ok_or_else(|| Error::invalid("checkpoint_dir is not UTF-8"))?)?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; nothing retained but the hook.
        check(unsafe { sys::tw_checkpoint_saver_hook_create(&mut raw, dir.as_ptr(), opts.as_ptr(), ptr::null(), 0) })?;
        Hook::from_created(raw)
    }

    fn from_created(raw: *mut sys::tw_hook) -> Result<Hook> {
        NonNull::new(raw).map(|raw| Hook { raw }).ok_or_else(|| Error::new(Code::Internal, "the library returned a NULL hook"))
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
