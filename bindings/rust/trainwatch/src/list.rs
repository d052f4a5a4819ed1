//! Every list getter: the C API gives a list as a count and an accessor by index (the `tw_*_count` /
//! `tw_*_at` pairs); [`collect`] reads the whole list into values.

use std::ffi::CStr;
use std::os::raw::c_char;
use std::ptr;

use crate::error::{check, Result};
use crate::sys;
use crate::tensor::TensorRef;

/// What a list's accessor writes (a tensor view, a string) and the value it becomes, valid for `'a`.
pub(crate) trait ListElement<'a>: Copy {
    type Value;
    fn empty() -> Self;
    /// # Safety
    /// `self` was written by the list's accessor and stays valid for `'a`.
    unsafe fn value(self) -> Self::Value;
}

impl<'a> ListElement<'a> for sys::tw_tensor {
    type Value = TensorRef<'a>;
    fn empty() -> Self {
        sys::tw_tensor::init()
    }
    unsafe fn value(self) -> TensorRef<'a> {
        TensorRef::from_raw(self)
    }
}

impl<'a> ListElement<'a> for *const c_char {
    type Value = String;
    fn empty() -> Self {
        ptr::null()
    }
    unsafe fn value(self) -> String {
        if self.is_null() {
            return String::new();
        }
        // The string is copied at once.
        CStr::from_ptr(self).to_string_lossy().into_owned()
    }
}

/// The `count` elements `at(index, &mut element)` (a `tw_*_at` call) writes, as values.
///
/// # Safety
/// `at` reads a live list whose elements stay valid for `'a`.
pub(crate) unsafe fn collect<'a, E: ListElement<'a>>(
    count: usize,
    mut at: impl FnMut(usize, &mut E) -> sys::tw_status,
) -> Result<Vec<E::Value>> {
    (0..count)
        .map(|i| {
            let mut element = E::empty();
            check(at(i, &mut element))?;
            Ok(element.value())
        })
        .collect()
}
