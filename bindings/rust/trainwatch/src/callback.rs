//! Rust values handed to the library as `user_data` with a `destroy` callback: boxed here, freed
//! exactly once by the library (through `destroy_boxed`), or here when the create call failed.
use std::os::raw::c_void;
use std::ptr;

use crate::error::guard;
use crate::sys;

/// Boxes `value` for the library.
pub(crate) fn into_user<T>(value: T) -> *mut c_void {
    Box::into_raw(Box::new(value)) as *mut c_void
}

/// The `destroy` slot for a `user_data` made by `into_user::<T>`.
///
/// # Safety
/// `user` comes from `into_user::<T>` and is freed once.
pub(crate) unsafe extern "C" fn destroy_boxed<T>(user: *mut c_void) {
    guard(|| {
        drop(Box::from_raw(user as *mut T));
        Ok(())
    });
}

/// The boxed value behind `user`, for a callback.
///
/// # Safety
/// `user` comes from `into_user::<T>`, is alive, and the library calls it from one thread at a time.
pub(crate) unsafe fn user_of<'a, T>(user: *mut c_void) -> &'a mut T {
    &mut *(user as *mut T)
}

/// Frees a `user_data` the library did not take (its create call failed).
///
/// # Safety
/// `user` comes from `into_user::<T>` and the library did not take it.
pub(crate) unsafe fn reclaim<T>(user: *mut c_void) {
    drop(Box::from_raw(user as *mut T));
}

/// Hands `value` (a closure or state, if any) to a create call: `create` gets the C callback
/// (`trampoline`, or none without a value), the boxed value as `user_data` and its `destroy` slot.
/// When the call fails the library did not take the box, and it is freed here. Returns the status.
pub(crate) fn hand_over<T, F>(
    value: Option<T>,
    trampoline: F,
    create: impl FnOnce(Option<F>, *mut c_void, Option<sys::tw_destroy_fn>) -> sys::tw_status,
) -> sys::tw_status {
    let (callback, user, destroy) = match value {
        Some(value) => (Some(trampoline), into_user(value), Some(destroy_boxed::<T> as sys::tw_destroy_fn)),
        None => (None, ptr::null_mut(), None),
    };
    let status = create(callback, user, destroy);
    if status != sys::TW_OK && !user.is_null() {
        // SAFETY: made above by `into_user::<T>`; the failed call did not take it.
        unsafe { reclaim::<T>(user) };
    }
    status
}
