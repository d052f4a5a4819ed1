//! Status codes, the crate's `Error`, and the guard that keeps panics and Rust errors from crossing
//! the C frames of a callback.
use std::any::Any;
use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

use crate::sys;

/// A non-OK `tw_status`. Values 1–16 are TensorFlow's canonical codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    /// Preemption: a `MonitoredSession` recovers from it.
    Aborted,
    /// End of input: a clean end of training.
    OutOfRange,
    Unimplemented,
    Internal,
    /// Transient: a `MonitoredSession` recovers from it.
    Unavailable,
    DataLoss,
    Unauthenticated,
    /// A watched value was NaN/Inf (TF's `NanLossDuringTrainingError`).
    NanLoss,
    Io,
    /// The step asked to stop (`StepContext::request_stop`): a clean end.
    StopIteration,
    /// A callback panicked; the panic is resumed once the C call returns.
    CallbackFailed,
    /// A code this crate does not know (a newer library).
    Other(i32),
}

const CODES: [(Code, i32); 20] = [
    (Code::Cancelled, 1),
    (Code::Unknown, 2),
    (Code::InvalidArgument, 3),
    (Code::DeadlineExceeded, 4),
    (Code::NotFound, 5),
    (Code::AlreadyExists, 6),
    (Code::PermissionDenied, 7),
    (Code::ResourceExhausted, 8),
    (Code::FailedPrecondition, 9),
    (Code::Aborted, 10),
    (Code::OutOfRange, 11),
    (Code::Unimplemented, 12),
    (Code::Internal, 13),
    (Code::Unavailable, 14),
    (Code::DataLoss, 15),
    (Code::Unauthenticated, 16),
    (Code::NanLoss, 100),
    (Code::Io, 101),
    (Code::StopIteration, 102),
    (Code::CallbackFailed, 103),
];

impl Code {
    /// The code of a raw status; `None` for `TW_OK`.
    pub fn from_status(status: i32) -> Option<Code> {
        if status == sys::TW_OK {
            return None;
        }
        Some(CODES.iter().find(|(_, raw)| *raw == status).map_or(Code::Other(status), |(code, _)| *code))
    }

    /// The raw `tw_status` value (never `TW_OK`: `Other(0)` reads as `TW_UNKNOWN`).
    pub fn status(self) -> i32 {
        match self {
            Code::Other(0) => 2,
            Code::Other(raw) => raw,
            code => CODES.iter().find(|(c, _)| *c == code).map(|(_, raw)| *raw).unwrap_or(2),
        }
    }

    /// The library's name for the code: `"TW_NAN_LOSS"`.
    pub fn name(self) -> &'static str {
        // SAFETY: tw_status_name returns a static, NUL-terminated ASCII string for any value.
        unsafe { CStr::from_ptr(sys::tw_status_name(self.status())) }.to_str().unwrap_or("TW_UNKNOWN_STATUS")
    }

    /// `OutOfRange` and `StopIteration` end training cleanly; they are not failures.
    pub fn is_clean_end(self) -> bool {
        matches!(self, Code::OutOfRange | Code::StopIteration)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error from the library, or one a hook or step returns to it: a status code and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
}

/// `Result` with this crate's `Error`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    /// The raw `tw_status`.
    pub fn status(&self) -> i32 {
        self.code.status()
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error of a failed call: `status` with this thread's last error message.
    pub(crate) fn last(status: i32) -> Error {
        // SAFETY: the library returns a valid NUL-terminated string owned by this thread.
        let message = unsafe { CStr::from_ptr(sys::tw_last_error_message()) }.to_string_lossy().into_owned();
        Error { code: Code::from_status(status).unwrap_or(Code::Unknown), message }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `TW_OK`, else the call's error.
pub(crate) fn check(status: i32) -> Result<()> {
    if status == sys::TW_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}

/// A string for C; an interior NUL is an `InvalidArgument` naming `what`.
pub(crate) fn c_string(what: &str, value: &str) -> Result<CString> {
    CString::new(value).map_err(|_| Error::invalid(format!("{} contains a NUL byte", what)))
}

// ------------------------------------------------------------------------------------------------
// Callbacks: nothing unwinds through C.
// ------------------------------------------------------------------------------------------------

thread_local! {
    /// The first panic caught in a callback during the current C call on this thread.
    static PENDING_PANIC: RefCell<Option<Box<dyn Any + Send>>> = RefCell::new(None);
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic".to_string()
    }
}

/// Runs a callback body for C: its `Err` becomes the status (with its message stored through
/// `tw_set_error`); a panic is caught, kept to be resumed after the C call, and reported as
/// `TW_CALLBACK_FAILED`.
pub(crate) fn guard<F: FnOnce() -> Result<()>>(body: F) -> sys::tw_status {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => sys::TW_OK,
        Ok(Err(error)) => set_error(error.status(), error.message()),
        Err(payload) => {
            let message = format!("panicked: {}", panic_text(&*payload));
            PENDING_PANIC.with(|slot| {
                let mut slot = slot.borrow_mut();
                if slot.is_none() {
                    *slot = Some(payload);
                }
            });
            set_error(sys::TW_CALLBACK_FAILED, &message)
        }
    }
}

fn set_error(status: i32, message: &str) -> sys::tw_status {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: a valid string; tw_set_error copies it.
    unsafe { sys::tw_set_error(status, message.as_ptr()) }
}

/// Makes a C call that may run callbacks: a panic caught in one of them is resumed here, on the Rust
/// side, once C has returned; otherwise the status becomes a `Result`.
pub(crate) fn call<F: FnOnce() -> sys::tw_status>(c_call: F) -> Result<()> {
    let status = c_call();
    if let Some(payload) = PENDING_PANIC.with(|slot| slot.borrow_mut().take()) {
        panic::resume_unwind(payload);
    }
    check(status)
}

/// For C calls made from `Drop`: a panic caught in a callback (a hook's own `Drop`) is dropped, as
/// resuming it while dropping could abort the process.
pub(crate) fn call_in_drop<F: FnOnce()>(c_call: F) {
    c_call();
    if let Some(payload) = PENDING_PANIC.with(|slot| slot.borrow_mut().take()) {
        eprintln!("trainwatch: a callback panicked while being dropped: {}", panic_text(&*payload));
    }
}
