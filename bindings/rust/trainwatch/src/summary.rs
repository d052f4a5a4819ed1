//! TensorBoard event files: `SummaryWriter` (TF's `FileWriter`) and `EventReader`
//! (`tf.compat.v1.train.summary_iterator`).
use std::ffi::CStr;
use std::os::raw::c_char;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use crate::builtin::c_path;
use crate::error::{c_string, check, Code, Error, Result};
use crate::sys;
use crate::tensor::View;

/// A `SessionLog` status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionLogStatus {
    Unspecified,
    Start,
    Stop,
    Checkpoint,
}

impl SessionLogStatus {
    fn raw(self) -> i32 {
        match self {
            SessionLogStatus::Unspecified => sys::TW_SESSION_LOG_STATUS_UNSPECIFIED,
            SessionLogStatus::Start => sys::TW_SESSION_LOG_START,
            SessionLogStatus::Stop => sys::TW_SESSION_LOG_STOP,
            SessionLogStatus::Checkpoint => sys::TW_SESSION_LOG_CHECKPOINT,
        }
    }
    fn from_raw(raw: i32) -> SessionLogStatus {
        match raw {
            sys::TW_SESSION_LOG_START => SessionLogStatus::Start,
            sys::TW_SESSION_LOG_STOP => SessionLogStatus::Stop,
            sys::TW_SESSION_LOG_CHECKPOINT => SessionLogStatus::Checkpoint,
            _ => SessionLogStatus::Unspecified,
        }
    }
}

/// A handle on the shared event-file writer of a directory (TF's `FileWriterCache`): handles of one
/// directory, and hooks writing there, share one file. Dropping the last handle flushes and closes it.
#[derive(Debug)]
pub struct SummaryWriter {
    raw: NonNull<sys::tw_summary_writer>,
}

// SAFETY: the library's writer is shared between threads (hooks, the background saver) and locks.
unsafe impl Send for SummaryWriter {}
unsafe impl Sync for SummaryWriter {}

impl SummaryWriter {
    /// Opens (creating the directory) `logdir`'s writer.
    pub fn open(logdir: impl AsRef<Path>) -> Result<SummaryWriter> {
        let dir = c_path("logdir", logdir.as_ref())?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_summary_writer_open(&mut raw, dir.as_ptr()) })?;
        NonNull::new(raw)
            .map(|raw| SummaryWriter { raw })
            .ok_or_else(|| Error::new(Code::Internal, "the library returned a NULL writer"))
    }

    /// TF's `add_summary` of one `simple_value`.
    pub fn add_scalar(&self, tag: &str, step: i64, value: f64) -> Result<()> {
        let tag = c_string("tag", tag)?;
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_summary_writer_add_scalar(self.raw.as_ptr(), tag.as_ptr(), step, value) })
    }

    /// A histogram of `values` (TF's bucket edges).
    pub fn add_histogram(&self, tag: &str, step: i64, values: &View<'_>) -> Result<()> {
        let tag = c_string("tag", tag)?;
        let raw = values.raw();
        // SAFETY: valid pointers for the call.
        check(unsafe { sys::tw_summary_writer_add_histogram(self.raw.as_ptr(), tag.as_ptr(), step, &raw) })
    }

    /// TF's `add_session_log`.
    pub fn add_session_log(
        &self,
        step: i64,
        status: SessionLogStatus,
        checkpoint_path: Option<&str>,
        message: Option<&str>,
    ) -> Result<()> {
        let path = checkpoint_path.map(|p| c_string("checkpoint_path", p)).transpose()?;
        let message = message.map(|m| c_string("message", m)).transpose()?;
        // SAFETY: valid pointers (or NULL) for the call.
        check(unsafe {
            sys::tw_summary_writer_add_session_log(
                self.raw.as_ptr(),
                step,
                status.raw(),
                path.as_ref().map_or(ptr::null(), |p| p.as_ptr()),
                message.as_ref().map_or(ptr::null(), |m| m.as_ptr()),
            )
        })
    }

    /// A serialized `Summary` protobuf, written as is.
    pub fn add_summary(&self, step: i64, summary: &[u8]) -> Result<()> {
        // SAFETY: valid for the call.
        check(unsafe {
            sys::tw_summary_writer_add_summary(self.raw.as_ptr(), step, summary.as_ptr() as *const _, summary.len())
        })
    }

    pub fn flush(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::tw_summary_writer_flush(self.raw.as_ptr()) })
    }

    /// Flushes and closes the shared file for every handle (TF's `FileWriter.close`); idempotent.
    pub fn close(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::tw_summary_writer_close(self.raw.as_ptr()) })
    }

    /// The event file's absolute path.
    pub fn path(&self) -> PathBuf {
        // SAFETY: valid while the handle lives; copied.
        PathBuf::from(
            unsafe { CStr::from_ptr(sys::tw_summary_writer_path(self.raw.as_ptr())) }.to_string_lossy().as_ref(),
        )
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::tw_summary_writer {
        self.raw.as_ptr()
    }
}

impl Drop for SummaryWriter {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::tw_summary_writer_destroy(self.raw.as_ptr()) }
    }
}

/// A histogram as read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub min: f64,
    pub max: f64,
    pub num: f64,
    pub sum: f64,
    pub sum_squares: f64,
    pub bucket_limit: Vec<f64>,
    pub bucket: Vec<f64>,
}

/// One `Summary.Value`.
#[derive(Clone, Debug, PartialEq)]
pub enum SummaryValue {
    Scalar {
        tag: String,
        value: f32,
    },
    Histogram {
        tag: String,
        histogram: Histogram,
    },
    /// An image, audio, tensor, …: not decoded.
    Other {
        tag: String,
    },
}

/// What an event holds.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    None,
    FileVersion(String),
    Summary(Vec<SummaryValue>),
    LogMessage {
        level: i32,
        message: String,
    },
    SessionLog {
        status: SessionLogStatus,
        checkpoint_path: String,
        message: String,
    },
    /// A graph, run metadata, …: not decoded.
    Other,
}

/// One event of an event file.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub wall_time: f64,
    pub step: i64,
    pub kind: EventKind,
}

unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

unsafe fn slice_of(p: *const f64, n: usize) -> Vec<f64> {
    if p.is_null() || n == 0 {
        Vec::new()
    } else {
        std::slice::from_raw_parts(p, n).to_vec()
    }
}

/// Reads an event file from its first record; an `Iterator` of `Result<Event>` (CRCs verified).
#[derive(Debug)]
pub struct EventReader {
    raw: NonNull<sys::tw_event_reader>,
    done: bool,
}

// SAFETY: a reader is used by one thread at a time (`&mut self`); it may move between threads.
unsafe impl Send for EventReader {}

impl EventReader {
    pub fn open(path: impl AsRef<Path>) -> Result<EventReader> {
        let path = c_path("path", path.as_ref())?;
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_event_reader_open(&mut raw, path.as_ptr()) })?;
        NonNull::new(raw)
            .map(|raw| EventReader { raw, done: false })
            .ok_or_else(|| Error::new(Code::Internal, "the library returned a NULL reader"))
    }

    /// The next event, `Ok(None)` after the last.
    pub fn next_event(&mut self) -> Result<Option<Event>> {
        let mut raw = sys::tw_event::init();
        // SAFETY: valid pointers; the event's strings live until the reader is freed, copied here.
        let status = unsafe { sys::tw_event_reader_next(&mut raw, self.raw.as_ptr()) };
        if status == sys::TW_OUT_OF_RANGE {
            return Ok(None);
        }
        check(status)?;
        let kind = unsafe {
            match raw.kind {
                sys::TW_EVENT_FILE_VERSION => EventKind::FileVersion(text(raw.file_version)),
                sys::TW_EVENT_SUMMARY => EventKind::Summary(
                    (0..raw.value_count)
                        .map(|i| {
                            let v = &**raw.values.add(i);
                            let tag = text(v.tag);
                            match v.kind {
                                sys::TW_SUMMARY_VALUE_SCALAR => SummaryValue::Scalar { tag, value: v.simple_value },
                                sys::TW_SUMMARY_VALUE_HISTOGRAM if !v.histogram.is_null() => {
                                    let h = &*v.histogram;
                                    SummaryValue::Histogram {
                                        tag,
                                        histogram: Histogram {
                                            min: h.min,
                                            max: h.max,
                                            num: h.num,
                                            sum: h.sum,
                                            sum_squares: h.sum_squares,
                                            bucket_limit: slice_of(h.bucket_limit, h.bucket_count),
                                            bucket: slice_of(h.bucket, h.bucket_count),
                                        },
                                    }
                                }
                                _ => SummaryValue::Other { tag },
                            }
                        })
                        .collect(),
                ),
                sys::TW_EVENT_LOG_MESSAGE => EventKind::LogMessage { level: raw.log_level, message: text(raw.message) },
                sys::TW_EVENT_SESSION_LOG => EventKind::SessionLog {
                    status: SessionLogStatus::from_raw(raw.session_log_status),
                    checkpoint_path: text(raw.checkpoint_path),
                    message: text(raw.message),
                },
                sys::TW_EVENT_NONE => EventKind::None,
                _ => EventKind::Other,
            }
        };
        Ok(Some(Event { wall_time: raw.wall_time, step: raw.step, kind }))
    }
}

impl Iterator for EventReader {
    type Item = Result<Event>;
    fn next(&mut self) -> Option<Result<Event>> {
        if self.done {
            return None;
        }
        match self.next_event() {
            Ok(Some(event)) => Some(Ok(event)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true; // the reader stays at the bad record: stop rather than repeat it
                Some(Err(e))
            }
        }
    }
}

impl Drop for EventReader {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::tw_event_reader_destroy(self.raw.as_ptr()) }
    }
}
