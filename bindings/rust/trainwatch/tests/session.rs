//! The wrapper's own contract: errors carry the status and message, panics never cross C and are
//! resumed after the C call, step closures return values, bad input is an error and never a crash,
//! and hooks and sessions may be dropped in any order.
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use trainwatch::{scan, Code, DType, Error, Hook, Opt, Options, RunContext, Session, SessionRef, SessionRunHook, View};

/// Records every callback; optionally fails or panics in one of them.
#[derive(Default)]
struct Recorder {
    log: Arc<Mutex<Vec<String>>>,
    fail_in: Option<&'static str>,
    panic_in: Option<&'static str>,
    fetch: Option<&'static str>,
}

impl Recorder {
    fn event(&self, name: &str) -> trainwatch::Result<()> {
        self.log.lock().unwrap().push(name.to_string());
        if self.panic_in == Some(name) {
            panic!("{} exploded", name);
        }
        if self.fail_in == Some(name) {
            return Err(Error::new(Code::InvalidArgument, format!("{} refused the batch", name)));
        }
        Ok(())
    }
}

impl SessionRunHook for Recorder {
    fn begin(&mut self, _: &SessionRef<'_>) -> trainwatch::Result<()> {
        self.event("begin")
    }
    fn after_create_session(&mut self, _: &SessionRef<'_>) -> trainwatch::Result<()> {
        self.event("after_create_session")
    }
    fn before_run(&mut self, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        if let Some(name) = self.fetch {
            ctx.request_fetch(name)?;
        }
        self.event("before_run")
    }
    fn after_run(&mut self, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        if let Some(name) = self.fetch {
            ctx.result(name)?;
        }
        self.event("after_run")
    }
    fn end(&mut self, _: &SessionRef<'_>) -> trainwatch::Result<()> {
        self.event("end")
    }
    fn on_error(&mut self, _: &SessionRef<'_>, error: Code) {
        let _ = self.event(&format!("on_error {}", error.name()));
    }
}

fn recorder(fail_in: Option<&'static str>, panic_in: Option<&'static str>) -> (Hook, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let hook = Hook::new("recorder", Recorder { log: log.clone(), fail_in, panic_in, fetch: None }).unwrap();
    (hook, log)
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn runtime_version_is_the_headers() {
    trainwatch::check_version().unwrap();
    assert_eq!(trainwatch::version(), (trainwatch::HEADER_VERSION_NUMBER, "0.1.0"));
}

#[test]
fn codes_and_dtypes_match_the_library() {
    assert_eq!(Code::NanLoss.name(), "TW_NAN_LOSS");
    assert_eq!(Code::from_status(100), Some(Code::NanLoss));
    assert_eq!(Code::from_status(0), None);
    assert_eq!(Code::from_status(4242), Some(Code::Other(4242)));
    assert_eq!(Code::Other(4242).name(), "TW_UNKNOWN_STATUS");
    assert_eq!(Code::Other(0).status(), 2); // never TW_OK
    assert_eq!(DType::F32.size(), 4);
    assert_eq!(DType::BF16.name(), "bfloat16");
    assert_eq!(DType::F8E5M2.raw(), 15);
    assert_eq!(DType::from_raw(DType::I64.raw()), Some(DType::I64));
    assert_eq!(DType::from_raw(99), None);
}

#[test]
fn step_value_is_returned_and_hooks_run_in_order() {
    let (hook, log) = recorder(None, None);
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    let doubled = session.run(&[], |ctx| Ok(ctx.global_step() * 2 + 7)).unwrap();
    assert_eq!(doubled, 7);
    assert_eq!(session.global_step(), 1);
    session.close().unwrap();
    assert_eq!(*log.lock().unwrap(), ["begin", "after_create_session", "before_run", "after_run", "end"]);
}

#[test]
fn hook_error_fails_the_run_with_its_code_and_message() {
    let (hook, log) = recorder(Some("before_run"), None);
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    let error = session.run(&[], |_| Ok(())).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("hook 'recorder' before_run"), "{}", error);
    assert!(error.message().contains("before_run refused the batch"), "{}", error);
    assert_eq!(error.to_string().split(':').next(), Some("TW_INVALID_ARGUMENT"));
    // The session is failed: no more runs, close skips end.
    assert_eq!(session.run(&[], |_| Ok(())).unwrap_err().code(), Code::FailedPrecondition);
    session.close().unwrap();
    assert_eq!(*log.lock().unwrap(), ["begin", "after_create_session", "before_run", "on_error TW_INVALID_ARGUMENT"]);
}

#[test]
fn hook_panic_is_resumed_after_the_c_call() {
    let (hook, log) = recorder(None, Some("after_run"));
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    let payload = panic::catch_unwind(AssertUnwindSafe(|| session.run(&[], |_| Ok(())))).unwrap_err();
    assert_eq!(panic_text(payload), "after_run exploded");
    // The library saw a callback failure and failed the session cleanly.
    assert_eq!(
        *log.lock().unwrap(),
        ["begin", "after_create_session", "before_run", "after_run", "on_error TW_CALLBACK_FAILED"]
    );
    let error = session.run(&[], |_| Ok(())).unwrap_err();
    assert_eq!(error.code(), Code::FailedPrecondition);
    session.close().unwrap();
}

#[test]
fn panic_in_begin_is_resumed_from_session_creation() {
    let (hook, log) = recorder(None, Some("begin"));
    let payload = panic::catch_unwind(AssertUnwindSafe(|| Session::monitored(None, &[&hook]))).unwrap_err();
    assert_eq!(panic_text(payload), "begin exploded");
    assert_eq!(*log.lock().unwrap(), ["begin", "on_error TW_CALLBACK_FAILED"]);
}

#[test]
fn step_panic_is_resumed_and_the_next_call_is_clean() {
    let mut session = Session::singular(None, &[]).unwrap();
    let payload = panic::catch_unwind(AssertUnwindSafe(|| {
        session.run(&[], |_| -> trainwatch::Result<()> { panic!("step exploded") })
    }))
    .unwrap_err();
    assert_eq!(panic_text(payload), "step exploded");
    // Nothing stays pending: the next call reports its own status.
    assert_eq!(session.run(&[], |_| Ok(())).unwrap_err().code(), Code::FailedPrecondition);
}

#[test]
fn out_of_range_and_request_stop_end_cleanly() {
    let (hook, log) = recorder(None, None);
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    let error = session
        .run(&[], |_| -> trainwatch::Result<()> { Err(Error::new(Code::OutOfRange, "end of input")) })
        .unwrap_err();
    assert_eq!(error.code(), Code::OutOfRange);
    assert!(error.code().is_clean_end());
    let error = session.run(&[], |ctx| -> trainwatch::Result<()> { Err(ctx.request_stop()) }).unwrap_err();
    assert_eq!(error.code(), Code::StopIteration);
    assert_eq!(error.message(), "step_fn has requested the iterations to stop.");
    session.close().unwrap();
    assert_eq!(log.lock().unwrap().last().map(String::as_str), Some("end"));
}

#[test]
fn feeds_fetches_and_variables_are_zero_copy_views() {
    let mut w = [1.0f64, 2.0, 3.0];
    {
        let mut opts = Options::new().unwrap();
        opts.variable("w", &mut w, &[3]).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let hook = Hook::new("fetcher", Recorder { log: log.clone(), fetch: Some("w"), ..Default::default() }).unwrap();
        let mut session = Session::singular(Some(&opts), &[&hook]).unwrap();
        let batch = [10i32, 20, 30, 40, 50, 60];
        let feeds = [View::new("batch", &batch, &[2, 3]).unwrap()];
        let sum = session
            .run(&feeds, |ctx| {
                let batch = ctx.feed("batch")?;
                assert_eq!(batch.shape(), &[2, 3]);
                assert_eq!(batch.dtype(), Some(DType::I32));
                let total: i32 = batch.as_slice::<i32>()?.iter().sum();
                assert_eq!(ctx.requested()?, ["w"]);
                assert!(ctx.is_requested("w"));
                assert!(!ctx.is_requested("loss"));
                ctx.variable_mut::<f64>("w")?[0] = total as f64;
                Ok(total)
            })
            .unwrap();
        assert_eq!(sum, 210);
        assert_eq!(session.variable::<f64>("w").unwrap(), &[210.0, 2.0, 3.0]);
        session.close().unwrap();
    }
    assert_eq!(w, [210.0, 2.0, 3.0]);
}

#[test]
fn bad_input_is_an_error_never_a_crash() {
    // Rust-side checks.
    assert_eq!(Hook::new("a\0b", Recorder::default()).unwrap_err().code(), Code::InvalidArgument);
    let data = [1.0f32, 2.0];
    assert_eq!(View::new("x", &data, &[3]).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(View::new("x", &data, &[-2]).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(View::from_bytes("h", DType::F16, &[0u8; 3], &[2]).unwrap_err().code(), Code::InvalidArgument);
    // Library-side checks, with the library's messages.
    let mut v = [0u8; 2];
    let error = Hook::stop_at_step(None, None).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert_eq!(error.message(), "One of num_steps or last_step must be specified.");
    assert_eq!(Hook::nan_tensor("", true).unwrap_err().code(), Code::InvalidArgument);
    let mut opts = Options::new().unwrap();
    assert_eq!(opts.set_i64(Opt::CheckpointDir, 3).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(opts.set_f64(Opt::MaxToKeep, 1.5).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(
        Hook::checkpoint_saver("/tmp/x", &opts).unwrap_err().message(),
        "Either every_secs or every_steps should be provided."
    );
    assert_eq!(opts.variable("global_step", &mut v, &[2]).unwrap_err().code(), Code::InvalidArgument);
    // Inside a run: a wrong dtype, an unknown feed, an unpublished fetch.
    let mut session = Session::singular(None, &[]).unwrap();
    let x = 1.5f32;
    let feeds = [View::scalar("x", &x).unwrap()];
    let error = session.run(&feeds, |ctx| ctx.feed("x")?.scalar::<f64>()).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("'x' is float32, not float64"), "{}", error);
    assert_eq!(
        Session::singular(None, &[]).unwrap().run(&feeds, |ctx| ctx.feed("y").map(|_| ())).unwrap_err().code(),
        Code::NotFound
    );
    let fetcher = Hook::new("fetcher", Recorder { fetch: Some("missing"), ..Default::default() }).unwrap();
    let mut session = Session::singular(None, &[&fetcher]).unwrap();
    assert_eq!(session.run(&[], |_| Ok(())).unwrap_err().code(), Code::NotFound);
    // A hook already in an open session.
    let (hook, _) = recorder(None, None);
    assert_eq!(Session::singular(None, &[&hook, &hook]).unwrap_err().code(), Code::InvalidArgument);
    let _first = Session::singular(None, &[&hook]).unwrap();
    assert_eq!(Session::singular(None, &[&hook]).unwrap_err().code(), Code::FailedPrecondition);
}

struct DropCounter(Arc<AtomicU32>, bool);

impl SessionRunHook for DropCounter {}

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        if self.1 {
            panic!("drop exploded");
        }
    }
}

#[test]
fn hooks_and_sessions_drop_in_any_order_exactly_once() {
    let drops = Arc::new(AtomicU32::new(0));
    let hook = Hook::new("counted", DropCounter(drops.clone(), false)).unwrap();
    let session = Session::monitored(None, &[&hook]).unwrap();
    drop(hook); // the session still holds it
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(session);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let hook = Hook::new("counted", DropCounter(drops.clone(), false)).unwrap();
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    session.close().unwrap();
    drop(session);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(hook);
    assert_eq!(drops.load(Ordering::SeqCst), 2);

    // A hook whose Drop panics: caught in the destroy trampoline, reported, not unwound through C.
    let hook = Hook::new("bad drop", DropCounter(drops.clone(), true)).unwrap();
    drop(hook);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn scan_counts_non_finite_values() {
    let data = [1.0f32, f32::NAN, f32::INFINITY, -f32::INFINITY, f32::NAN];
    let result = scan(&View::new("t", &data, &[5]).unwrap()).unwrap();
    assert_eq!((result.nan_count, result.pos_inf_count, result.neg_inf_count), (2, 1, 1));
    assert_eq!(result.first_nonfinite_index, Some(1));
    let finite = [1i64, 2, 3];
    assert_eq!(scan(&View::new("t", &finite, &[3]).unwrap()).unwrap().first_nonfinite_index, None);
}

#[test]
fn options_round_trip_and_latest_checkpoint_of_an_empty_dir() {
    let mut opts = Options::new().unwrap();
    assert_eq!(opts.get_i64(Opt::MaxToKeep).unwrap(), 5);
    assert_eq!(opts.get_str(Opt::CheckpointDir).unwrap(), None);
    opts.set_i64(Opt::MaxToKeep, 2)
        .unwrap()
        .set_f64(Opt::RecoveryBackoffSecs, 0.5)
        .unwrap()
        .set_str(Opt::CheckpointBasename, "m")
        .unwrap();
    assert_eq!(opts.get_i64(Opt::MaxToKeep).unwrap(), 2);
    assert_eq!(opts.get_f64(Opt::RecoveryBackoffSecs).unwrap(), 0.5);
    assert_eq!(opts.get_str(Opt::CheckpointBasename).unwrap().as_deref(), Some("m"));
    let dir = std::env::temp_dir().join(format!("tw_rust_empty_{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    assert_eq!(trainwatch::latest_checkpoint(&dir).unwrap(), None);
    fs::remove_dir_all(&dir).unwrap();
}
