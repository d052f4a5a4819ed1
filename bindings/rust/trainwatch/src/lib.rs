//! Safe Rust bindings to **trainwatch**: TensorFlow 1's `MonitoredSession` and its hooks as a C
//! library. The raw declarations are in [`sys`], written by hand from `include/trainwatch/*.h`; the
//! rest is a safe wrapper:
//!
//! - RAII [`Options`], [`Session`] and [`Hook`] (dropping frees; sessions and hooks may be dropped in
//!   any order);
//! - the [`SessionRunHook`] trait for hooks written in Rust, called through C trampolines that catch
//!   panics: a panic never unwinds through C — it fails the run and is resumed from `Session::run`
//!   (or whichever session call was running) once the library has returned;
//! - [`Result`]`<_, `[`Error`]`>` carrying the status [`Code`] and the library's message;
//! - step closures: `session.run(&feeds, |ctx| { …; Ok(value) })`.
//!
//! ```no_run
//! use trainwatch::{Hook, Opt, Options, Session, View};
//!
//! # fn main() -> trainwatch::Result<()> {
//! let mut w = [0f32; 4];
//! {
//!     let mut opts = Options::new()?;
//!     opts.variable("w", &mut w, &[4])?.set_str(Opt::CheckpointDir, "/tmp/ckpt")?;
//!     let stop = Hook::stop_at_step(None, Some(100))?;
//!     let nan = Hook::nan_tensor("loss", true)?;
//!     let mut session = Session::monitored(Some(&opts), &[&stop, &nan])?;
//!     let lr = 0.1f32;
//!     while !session.should_stop() {
//!         session.run(&[View::scalar("lr", &lr)?], |ctx| {
//!             let lr = ctx.feed("lr")?.scalar::<f32>()?;
//!             let w = ctx.variable_mut::<f32>("w")?;
//!             w.iter_mut().for_each(|x| *x -= lr * *x);
//!             let loss: f32 = w.iter().map(|x| x * x).sum();
//!             ctx.publish_scalar("loss", loss)
//!         })?;
//!     }
//!     session.close()?;
//! }
//! println!("trained: {:?}", w);
//! # Ok(()) }
//! ```
mod builtin;
mod callback;
pub mod checkpoint;
mod error;
pub mod experimental;
mod hook;
mod list;
mod listener;
mod options;
mod session;
mod summary;
mod training;
pub use trainwatch_sys as sys;
mod tensor;

use std::ffi::CStr;
use std::os::raw::c_char;
use std::path::{Path, PathBuf};

pub use builtin::{
    CheckpointSaverHook, GlobalStepWaiterHook, LoggingTensorHook, NanAction, NanEvent, NanTensorHook, ProfilerHook,
    StepCounterHook, StopAtStepHook, SummarySaverHook,
};
pub use checkpoint::{Saver, Variable};
pub use error::{Code, Error, Result};
pub use hook::{Hook, HookCallbacks, SessionRunHook, Super};
pub use listener::{CheckpointListener, CheckpointSaverListener};
pub use options::{Opt, OptionInfo, OptionState, OptionType, Options};
pub use session::{RunContext, Session, SessionRef, StepContext};
pub use summary::{Event, EventKind, EventReader, Histogram, SessionLogStatus, SummaryValue, SummaryWriter};
pub use tensor::{
    check_numerics, element_count_of, has_nonfinite, numerics_target, scan, stats, DType, Element, ScanResult, Stats,
    Tensor, TensorRef, View,
};
pub use training::MonitoredTrainingSession;

/// `TW_VERSION_NUMBER` of the header this crate was written against (MAJOR*10000 + MINOR*100 + PATCH).
pub const HEADER_VERSION_NUMBER: u32 = sys::TW_VERSION_NUMBER;

/// The version of the library actually loaded: `(number, "MAJOR.MINOR.PATCH")`.
pub fn version() -> (u32, &'static str) {
    // SAFETY: plain calls; the string is static.
    unsafe { (sys::tw_version_number(), CStr::from_ptr(sys::tw_version_string()).to_str().unwrap_or("")) }
}

/// Fails with `FailedPrecondition` when the loaded library is of another ABI major than the header
/// this crate follows, or older than it.
pub fn check_version() -> Result<()> {
    let (number, text) = version();
    if number / 10000 != HEADER_VERSION_NUMBER / 10000 || number < HEADER_VERSION_NUMBER {
        return Err(Error::new(
            Code::FailedPrecondition,
            format!("libtrainwatch is {} ({}), this crate needs {}", number, text, HEADER_VERSION_NUMBER),
        ));
    }
    Ok(())
}

/// Log levels (Python logging's numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Debug = 10,
    Info = 20,
    Warning = 30,
    Error = 40,
}

/// Drops library log lines below `level` (default `Info`; they go to stderr).
pub fn set_log_level(level: LogLevel) {
    // SAFETY: a plain call.
    unsafe { sys::tw_set_log_level(level as i32) }
}

type LogSink = Box<dyn Fn(LogLevel, &str) + Send + Sync>;

unsafe extern "C" fn log_trampoline(user: *mut std::os::raw::c_void, level: sys::tw_log_level, message: *const c_char) {
    let _ = error::guard(|| {
        let sink = &*(user as *const LogSink);
        let level = match level {
            l if l <= 10 => LogLevel::Debug,
            l if l <= 20 => LogLevel::Info,
            l if l <= 30 => LogLevel::Warning,
            _ => LogLevel::Error,
        };
        sink(level, &CStr::from_ptr(message).to_string_lossy());
        Ok(())
    });
}

/// Sends library log lines to `sink` instead of stderr (`None`: back to stderr). Called from any
/// thread, background savers included. A sink is never freed (a background thread may still be
/// calling one that was replaced): install one per process.
pub fn set_log_sink<F>(sink: Option<F>)
where
    F: Fn(LogLevel, &str) + Send + Sync + 'static,
{
    match sink {
        Some(f) => {
            let boxed: LogSink = Box::new(f);
            // SAFETY: leaked, so valid for the rest of the process.
            unsafe { sys::tw_set_log_sink(Some(log_trampoline), Box::into_raw(Box::new(boxed)) as *mut _) }
        }
        // SAFETY: a plain call.
        None => unsafe { sys::tw_set_log_sink(None, std::ptr::null_mut()) },
    }
}

/// `tf.train.latest_checkpoint(dir)`: the newest checkpoint listed in `dir`'s state file, or `None`.
pub fn latest_checkpoint(dir: impl AsRef<Path>) -> Result<Option<PathBuf>> {
    let dir = dir.as_ref();
    let dir =
        error::c_string("dir", dir.to_str().ok_or_else(|| Error::new(Code::InvalidArgument, "dir is not UTF-8"))?)?;
    let mut buffer = vec![0 as c_char; 4096];
    loop {
        // SAFETY: the buffer holds buffer.len() bytes.
        let status = unsafe { sys::tw_latest_checkpoint(buffer.as_mut_ptr(), buffer.len(), dir.as_ptr()) };
        match Code::from_status(status) {
            None => {
                // SAFETY: NUL-terminated by the library.
                let path = unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_string_lossy().into_owned();
                return Ok(Some(PathBuf::from(path)));
            }
            Some(Code::NotFound) => return Ok(None),
            Some(Code::OutOfRange) if buffer.len() < 1 << 20 => buffer.resize(buffer.len() * 4, 0),
            Some(_) => return Err(Error::last(status)),
        }
    }
}

/// The README's examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
