//! TF's `CheckpointSaverListener`: code run around every save of a `CheckpointSaverHook`.
use std::ffi::CString;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use crate::callback::{destroy_boxed, into_user, reclaim, user_of};
use crate::error::{c_string, guard, Error, Result};
use crate::session::SessionRef;
use crate::sys;

/// The callbacks of a checkpoint listener; each defaults to nothing. An `Err` fails the run (or
/// creation, or close) the save happens in. Called on the thread running the session, or — for an
/// asynchronous saver's `after_save` — on the thread that finishes the write: hence `Send`.
pub trait CheckpointSaverListener: Send {
    /// When the hook begins.
    fn begin(&mut self) -> Result<()> {
        Ok(())
    }
    /// Before each save, with the step saved.
    fn before_save(&mut self, _session: &SessionRef<'_>, _global_step: i64) -> Result<()> {
        Ok(())
    }
    /// After each save: `Ok(true)` asks training to stop (ignored for the saves at creation and at
    /// the end, as in TF).
    fn after_save(&mut self, _session: &SessionRef<'_>, _global_step: i64) -> Result<bool> {
        Ok(false)
    }
    /// When the hook ends, after its last save.
    fn end(&mut self, _session: &SessionRef<'_>, _global_step: i64) -> Result<()> {
        Ok(())
    }
}

type Boxed = Box<dyn CheckpointSaverListener>;

unsafe extern "C" fn begin(user: *mut c_void) -> sys::tw_status {
    guard(|| user_of::<Boxed>(user).begin())
}
unsafe extern "C" fn before_save(user: *mut c_void, session: *mut sys::tw_session, step: i64) -> sys::tw_status {
    guard(|| user_of::<Boxed>(user).before_save(&SessionRef::from_raw(session), step))
}
unsafe extern "C" fn after_save(
    user: *mut c_void,
    session: *mut sys::tw_session,
    step: i64,
    request_stop: *mut c_int,
) -> sys::tw_status {
    guard(|| {
        if user_of::<Boxed>(user).after_save(&SessionRef::from_raw(session), step)? && !request_stop.is_null() {
            *request_stop = 1;
        }
        Ok(())
    })
}
unsafe extern "C" fn end(user: *mut c_void, session: *mut sys::tw_session, step: i64) -> sys::tw_status {
    guard(|| user_of::<Boxed>(user).end(&SessionRef::from_raw(session), step))
}

/// A listener to give to `CheckpointSaverHookBuilder::listener`. Hooks keep their own reference:
/// it may be dropped once the hook is made; the Rust listener is dropped when the last one goes.
#[derive(Debug)]
pub struct CheckpointListener {
    raw: NonNull<sys::tw_checkpoint_listener>,
}

impl CheckpointListener {
    pub fn new<L: CheckpointSaverListener + 'static>(name: &str, listener: L) -> Result<CheckpointListener> {
        let name: CString = c_string("listener name", name)?;
        let table = sys::tw_checkpoint_listener_callbacks {
            struct_size: std::mem::size_of::<sys::tw_checkpoint_listener_callbacks>() as u32,
            begin: Some(begin),
            before_save: Some(before_save),
            after_save: Some(after_save),
            end: Some(end),
            destroy: Some(destroy_boxed::<Boxed>),
        };
        let boxed: Boxed = Box::new(listener);
        let user = into_user(boxed);
        let mut raw = ptr::null_mut();
        // SAFETY: the table and name are copied; on success the library owns `user`.
        let status = unsafe { sys::tw_checkpoint_listener_create(&mut raw, name.as_ptr(), &table, user) };
        if status != sys::TW_OK {
            // SAFETY: not taken.
            unsafe { reclaim::<Boxed>(user) };
            return Err(Error::last(status));
        }
        NonNull::new(raw)
            .map(|raw| CheckpointListener { raw })
            .ok_or_else(|| Error::new(crate::Code::Internal, "the library returned a NULL listener"))
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::tw_checkpoint_listener {
        self.raw.as_ptr()
    }
}

impl Drop for CheckpointListener {
    fn drop(&mut self) {
        // SAFETY: the caller's reference, released once.
        crate::error::call_in_drop(|| unsafe { sys::tw_checkpoint_listener_destroy(self.raw.as_ptr()) });
    }
}
