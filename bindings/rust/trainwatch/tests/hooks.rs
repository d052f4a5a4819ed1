//! Every built-in hook through its builder: each test checks what the hook does (TF's behaviour,
//! docs/tf-semantics.md B-IDs), not only that it can be made.
mod common;

use std::fs;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use common::{step, Scratch};
use trainwatch::{
    CheckpointListener, CheckpointSaverHook, CheckpointSaverListener, Code, GlobalStepWaiterHook, Hook,
    LoggingTensorHook, NanAction, NanTensorHook, Options, ProfilerHook, Session, SessionRef, StepCounterHook,
    StopAtStepHook, SummarySaverHook, SummaryValue, SummaryWriter, Tensor, View,
};

/// Options with the variable "w" that `step` trains.
fn options_with_w(w: &mut [f32]) -> Options<'_> {
    let shape = [w.len() as i64];
    let mut opts = Options::new().unwrap();
    opts.variable("w", w, &shape).unwrap();
    opts
}

/// `runs` runs of `step` (x = 1) under a monitored session with `hooks`, then its close.
fn train(hooks: &[&Hook], runs: usize) {
    let mut w = [0f32; 1];
    let opts = options_with_w(&mut w);
    let mut session = Session::monitored(Some(&opts), hooks).unwrap();
    for _ in 0..runs {
        step(&mut session, 1.0).unwrap();
    }
    session.close().unwrap();
}

#[derive(Clone, Default)]
struct Saves(Arc<Mutex<Vec<String>>>);

impl CheckpointSaverListener for Saves {
    fn begin(&mut self) -> trainwatch::Result<()> {
        self.0.lock().unwrap().push("begin".into());
        Ok(())
    }
    fn before_save(&mut self, _: &SessionRef<'_>, step: i64) -> trainwatch::Result<()> {
        self.0.lock().unwrap().push(format!("before_save {}", step));
        Ok(())
    }
    fn after_save(&mut self, _: &SessionRef<'_>, step: i64) -> trainwatch::Result<bool> {
        self.0.lock().unwrap().push(format!("after_save {}", step));
        Ok(step == 4) // B24: a listener's stop request ends training after that run
    }
    fn end(&mut self, _: &SessionRef<'_>, step: i64) -> trainwatch::Result<()> {
        self.0.lock().unwrap().push(format!("end {}", step));
        Ok(())
    }
}

#[test]
fn checkpoint_saver_hook_calls_listeners_and_a_listener_stops_training() {
    let dir = Scratch::new("listener");
    let saves = Saves::default();
    let hook = CheckpointSaverHook::new(&dir.0)
        .save_steps(2)
        .async_checkpoint(false)
        .listener(CheckpointListener::new("saves", saves.clone()).unwrap())
        .build()
        .unwrap();
    let mut w = [0f32; 4];
    let opts = options_with_w(&mut w);
    let mut session = Session::monitored(Some(&opts), &[&hook]).unwrap();
    let mut runs = 0;
    while !session.should_stop() && runs < 10 {
        step(&mut session, 1.0).unwrap();
        runs += 1;
    }
    assert_eq!(runs, 4, "the listener's stop request after the save of step 4 ends training");
    session.close().unwrap();
    let log = saves.0.lock().unwrap().clone();
    assert_eq!(log[0], "begin");
    for expected in ["before_save 0", "after_save 0", "after_save 2", "after_save 4", "end 4"] {
        assert!(log.iter().any(|l| l == expected), "{} missing from {:?}", expected, log);
    }
    assert!(trainwatch::latest_checkpoint(&dir.0).unwrap().unwrap().ends_with("model.ckpt-4"));
}

#[test]
fn checkpoint_saver_hook_refuses_both_periods() {
    let error = CheckpointSaverHook::new("/tmp/unused").save_steps(2).save_secs(1.0).build().unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("every_secs and every_steps"), "{}", error);
}

#[test]
fn nan_tensor_hook_callback_sees_each_bad_value_and_stop_action_stops() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let hook = NanTensorHook::new("loss")
        .on_nan(move |session, event| {
            seen.lock().unwrap().push(event.clone());
            session.request_stop()
        })
        .build()
        .unwrap();
    let mut w = [0f32; 4];
    let opts = options_with_w(&mut w);
    let mut session = Session::monitored(Some(&opts), &[&hook]).unwrap();
    step(&mut session, 1.0).unwrap();
    step(&mut session, f32::INFINITY).unwrap(); // Inf counts by default: the callback decides, run OK
    assert!(session.should_stop());
    session.close().unwrap();
    let events = events.lock().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].tensor_name.as_str(), events[0].global_step, events[0].pos_inf_count), ("loss", 1, 1));
    drop(session);

    let stop = NanTensorHook::new("loss").action(NanAction::Stop).build().unwrap();
    let mut session = Session::monitored(Some(&opts), &[&stop]).unwrap();
    step(&mut session, f32::NAN).unwrap(); // B34: fail_on_nan_loss=False warns and stops
    assert!(session.should_stop());
}

#[test]
fn logging_tensor_hook_formats_through_the_formatter_and_the_log_fn() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let out = lines.clone();
    let hook = LoggingTensorHook::tagged(&[("the_loss", "loss")])
        .every_n_iter(2)
        .formatter(|values| Ok(format!("{}={}", values[0].name(), values[0].scalar::<f32>()?)))
        .build()
        .unwrap();
    let logged = Arc::new(Mutex::new(Vec::new()));
    let sink = logged.clone();
    trainwatch::set_log_sink(Some(move |_level, line: &str| {
        if line.starts_with("the_loss=") {
            sink.lock().unwrap().push(line.to_string());
        }
    }));
    hook.set_log_tensors_fn(move |hook, values| {
        out.lock().unwrap().push(format!("{}:{}", values[0].name(), values[0].scalar::<f32>()?));
        if values[0].scalar::<f32>()? != 3.0 {
            hook.log_tensors(values)?; // super()._log_tensors: the formatter's line, the timer restarted
        }
        Ok(())
    })
    .unwrap();
    train(&[&hook], 5);
    trainwatch::set_log_sink(None::<fn(trainwatch::LogLevel, &str)>);
    // B8, B9: every_n_iter=2 counts from the last line the built-in logged. Run 1 logs through super();
    // run 3 does not call it, which leaves the timer at run 1, so run 4 triggers too.
    assert_eq!(*lines.lock().unwrap(), ["the_loss:1", "the_loss:3", "the_loss:4"]);
    assert_eq!(*logged.lock().unwrap(), ["the_loss=1", "the_loss=4"]);
    assert_eq!(LoggingTensorHook::new(&["loss"]).build().unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn step_counter_hook_records_the_rate_through_its_record_fn() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let hook = StepCounterHook::new().every_n_steps(2).build().unwrap();
    hook.set_step_rate_fn(move |_hook, steps, secs, global_step| {
        assert!(secs >= 0.0);
        seen.lock().unwrap().push((steps, global_step));
        Ok(())
    })
    .unwrap();
    train(&[&hook], 5);
    // B28: the first trigger starts the clock; then one record per 2 steps.
    assert_eq!(*calls.lock().unwrap(), [(2, 3), (2, 5)]);
}

#[test]
fn summary_saver_hook_writes_scalars_that_the_event_reader_reads_back() {
    let dir = Scratch::new("summaries");
    let writer = SummaryWriter::open(&dir.0).unwrap();
    let hook = SummarySaverHook::new().summarize("loss").save_steps(2).summary_writer(&writer).build().unwrap();
    train(&[&hook], 4);
    writer.add_scalar("manual", 7, 0.5).unwrap();
    writer.flush().unwrap();
    let scalars: Vec<(i64, String, f32)> = trainwatch::EventReader::open(writer.path())
        .unwrap()
        .map(|e| e.unwrap())
        .flat_map(|e| match e.kind {
            trainwatch::EventKind::Summary(values) => values
                .into_iter()
                .filter_map(|v| match v {
                    SummaryValue::Scalar { tag, value } => Some((e.step, tag, value)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    // B38, B39: the first run writes at step 1, then every 2 steps.
    assert_eq!(scalars, [(1, "loss".to_string(), 1.0), (3, "loss".to_string(), 3.0), (7, "manual".to_string(), 0.5)]);
}

#[test]
fn profiler_hook_writes_a_timeline() {
    let dir = Scratch::new("profiler");
    let hook = ProfilerHook::new().save_steps(2).output_dir(&dir.0).build().unwrap();
    train(&[&hook], 3);
    let timeline = fs::read_to_string(dir.0.join("timeline-2.json")).expect("B45: a trace of the run reaching step 2");
    assert!(timeline.contains("\"step\""), "{}", timeline);
}

#[test]
fn feed_fn_hook_feeds_every_run_and_final_ops_hook_keeps_its_values() {
    let next = Arc::new(AtomicU32::new(0));
    let counter = next.clone();
    let feeder = Hook::feed_fn(move || {
        let x = counter.fetch_add(1, Ordering::SeqCst) as f32;
        Ok(vec![Tensor::scalar("x", x)?])
    })
    .unwrap();
    let scale = 10f32;
    let final_ops = Hook::final_ops(&[View::scalar("scale", &scale).unwrap()], |ctx| {
        let scale = ctx.feed("scale")?.scalar::<f32>()?;
        let total: f32 = ctx.variable_mut::<f32>("w")?.iter().sum();
        ctx.publish_scalar("scaled", total * scale)
    })
    .unwrap();
    let mut w = [0f32; 1];
    {
        let opts = options_with_w(&mut w);
        let mut session = Session::monitored(Some(&opts), &[&feeder, &final_ops]).unwrap();
        assert_eq!(final_ops.final_ops_value("scaled").unwrap_err().code(), Code::FailedPrecondition);
        for _ in 0..3 {
            session
                .run(&[], |ctx| {
                    let x = ctx.feed("x")?.scalar::<f32>()?;
                    ctx.variable_mut::<f32>("w")?[0] += x;
                    Ok(())
                })
                .unwrap();
        }
        session.close().unwrap();
    }
    assert_eq!(w[0], 0.0 + 1.0 + 2.0); // B44: the hook's feeds, one per run
    assert_eq!(final_ops.final_ops_value("scaled").unwrap().scalar_value::<f32>().unwrap(), 30.0); // B43
    assert_eq!(final_ops.final_ops_values().unwrap().len(), 1);
}

#[test]
fn global_step_waiter_hook_waits_for_the_shared_step() {
    let reads = Arc::new(AtomicI64::new(0));
    let counter = reads.clone();
    let hook = GlobalStepWaiterHook::new(3)
        .poll_secs(0.001)
        .step_reader(move |_| Ok(counter.fetch_add(1, Ordering::SeqCst)))
        .build()
        .unwrap();
    let mut w = [0f32; 1];
    let opts = options_with_w(&mut w);
    let mut session = Session::monitored(Some(&opts), &[&hook]).unwrap();
    step(&mut session, 1.0).unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 4, "B42: read until the step reached 3");
    step(&mut session, 1.0).unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 4, "later runs do not wait");

    let never = GlobalStepWaiterHook::new(5).poll_secs(0.001).max_secs(0.01).step_reader(|_| Ok(0)).build().unwrap();
    let mut session = Session::monitored(Some(&opts), &[&never]).unwrap();
    assert_eq!(step(&mut session, 1.0).unwrap_err().code(), Code::DeadlineExceeded);
}

#[test]
fn stop_at_step_hook_takes_tf_argument_names() {
    let mut w = [0f32; 1];
    let opts = options_with_w(&mut w);
    let stop = StopAtStepHook::num_steps(3).unwrap();
    let mut session = Session::singular(Some(&opts), &[&stop]).unwrap();
    let mut runs = 0;
    while !session.should_stop() {
        step(&mut session, 1.0).unwrap();
        runs += 1;
    }
    assert_eq!((runs, session.global_step()), (3, 3));
    assert_eq!(StopAtStepHook::num_steps(-1).unwrap_err().code(), Code::InvalidArgument);
}
