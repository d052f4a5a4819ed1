//! MonitoredTrainingSession (TF's T1–T10), SingularMonitoredSession, session options and the
//! session's own accessors.
mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use common::{step, Scratch};
use trainwatch::{
    Code, EventKind, EventReader, MonitoredTrainingSession, Opt, OptionState, OptionType, Options, RunContext, Session,
    SessionRunHook, StopAtStepHook, SummaryValue, Tensor, View,
};

#[test]
fn monitored_training_session_adds_tf_default_hooks_and_resumes() {
    let dir = Scratch::new("mts");
    let mut w = [0f32; 4];
    let stop = StopAtStepHook::last_step(4).unwrap();
    {
        let mut session = MonitoredTrainingSession::new()
            .checkpoint_dir(&dir.0)
            .save_checkpoint_steps(Some(2))
            .save_summaries_steps(Some(2))
            .log_step_count_steps(Some(2))
            .variable("w", &mut w, &[4])
            .hook(&stop)
            .create()
            .unwrap();
        // T6: the chief's defaults, in TF's order, then the caller's hooks.
        assert_eq!(
            session.hook_names().unwrap(),
            ["StepCounterHook", "SummarySaverHook", "CheckpointSaverHook", "StopAtStepHook"]
        );
        assert!(session.is_chief());
        while !session.should_stop() {
            step(&mut session, 1.0).unwrap();
        }
        assert_eq!(session.variables().unwrap()[0].as_slice::<f32>().unwrap(), &[4.0; 4]);
        session.close().unwrap();
    }
    assert!(trainwatch::latest_checkpoint(&dir.0).unwrap().unwrap().ends_with("model.ckpt-4"));
    // T7: summaries go to the checkpoint dir: the published loss as a scalar.
    let events = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("events.out.tfevents"))
        .expect("an event file");
    let losses: Vec<i64> = EventReader::open(&events)
        .unwrap()
        .filter_map(|e| match e.unwrap() {
            trainwatch::Event { step, kind: EventKind::Summary(values), .. }
                if values.iter().any(|v| matches!(v, SummaryValue::Scalar { tag, .. } if tag == "loss")) =>
            {
                Some(step)
            }
            _ => None,
        })
        .collect();
    assert_eq!(losses, [1, 3]);

    let mut fresh = [0f32; 4];
    let stop = StopAtStepHook::last_step(5).unwrap();
    let mut session = MonitoredTrainingSession::new()
        .checkpoint_dir(&dir.0)
        .save_checkpoint_secs(None) // T2: only one of the pair given, the other is None: no saver
        .save_summaries_steps(None)
        .log_step_count_steps(None)
        .variable("w", &mut fresh, &[4])
        .hook(&stop)
        .create()
        .unwrap();
    assert_eq!(session.hook_names().unwrap(), ["StopAtStepHook"]);
    assert_eq!((session.global_step(), session.variable::<f32>("w").unwrap()), (4, &[4.0f32; 4][..]));
    assert_eq!(session.creation_count(), 1);
    step(&mut session, 1.0).unwrap();
    assert!(session.should_stop());
}

#[test]
fn monitored_training_session_refuses_both_checkpoint_frequencies() {
    let error = MonitoredTrainingSession::new()
        .checkpoint_dir("/tmp/tw_rust_unused")
        .save_checkpoint_steps(Some(1))
        .save_checkpoint_secs(Some(1.0))
        .create()
        .unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("Can not provide both every_secs and every_steps."), "{}", error);
}

#[test]
fn options_report_state_info_recoverable_codes_and_recorded_errors() {
    let mut opts = Options::new().unwrap();
    assert_eq!(opts.state(Opt::CheckpointEveryNSteps).unwrap(), OptionState::Default);
    opts.set_none(Opt::CheckpointEveryNSteps).unwrap();
    assert_eq!(opts.state(Opt::CheckpointEveryNSteps).unwrap(), OptionState::None);
    opts.set_i64(Opt::MaxToKeep, 3).unwrap();
    assert_eq!(opts.state(Opt::MaxToKeep).unwrap(), OptionState::Set);
    let info = Opt::MaxToKeep.info().unwrap();
    assert_eq!((info.name, info.option_type, info.i64_default), ("TW_OPT_MAX_TO_KEEP", OptionType::I64, 5));
    assert_eq!(trainwatch::Opt::info_by_name("max_to_keep").unwrap().key, info.key);
    assert_eq!(Opt::info_by_name("no_such_option").unwrap_err().code(), Code::NotFound);

    // A recoverable code: the session re-creates and runs the step again.
    let mut w = [0f32; 1];
    let mut opts = Options::new().unwrap();
    opts.variable("w", &mut w, &[1]).unwrap().set_recoverable(Code::Internal, true).unwrap();
    opts.set_f64(Opt::RecoveryBackoffSecs, 0.0).unwrap();
    let mut session = Session::monitored(Some(&opts), &[]).unwrap();
    let mut attempts = 0;
    session
        .run(&[], |_| {
            attempts += 1;
            if attempts == 1 {
                Err(trainwatch::Error::new(Code::Internal, "transient"))
            } else {
                Ok(())
            }
        })
        .unwrap();
    assert_eq!((attempts, session.creation_count()), (2, 2));
    drop(session);

    let mut opts = Options::new().unwrap();
    opts.record_error(Code::InvalidArgument, "the batch buffer is too small").unwrap();
    let error = Session::monitored(Some(&opts), &[]).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("the batch buffer is too small"), "{}", error);
}

#[test]
fn singular_session_runs_init_fn_without_a_checkpoint() {
    let inits = Arc::new(AtomicU32::new(0));
    let counter = inits.clone();
    let mut w = [0f32; 2];
    {
        let mut opts = Options::new().unwrap();
        opts.variable("w", &mut w, &[2]).unwrap();
        opts.set_init_fn(move |session| {
            counter.fetch_add(1, Ordering::SeqCst);
            session.request_stop()
        })
        .unwrap();
        let session = Session::singular(Some(&opts), &[]).unwrap();
        assert!(session.should_stop(), "the init function's stop request");
    }
    assert_eq!(inits.load(Ordering::SeqCst), 1);

    let mut opts = Options::new().unwrap();
    opts.set_bool(Opt::IsChief, false).unwrap().set_f64(Opt::RecoveryWaitSecs, 0.001).unwrap();
    opts.set_f64(Opt::MaxWaitSecs, 0.01).unwrap();
    opts.set_ready_fn(|_| Ok(false)).unwrap();
    assert_eq!(Session::monitored(Some(&opts), &[]).unwrap_err().code(), Code::DeadlineExceeded);
}

struct Feeder;

impl SessionRunHook for Feeder {
    fn before_run(&mut self, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        assert_eq!(ctx.original_feeds()?.len(), 1);
        ctx.add_feed(Tensor::new("y", &[2.0f32, 3.0], &[2])?)
    }
}

#[test]
fn a_hook_adds_feeds_and_sees_the_callers() {
    let hook = trainwatch::Hook::new("feeder", Feeder).unwrap();
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    let x = 1f32;
    let sum = session
        .run(&[View::scalar("x", &x).unwrap()], |ctx| {
            let y: f32 = ctx.feed("y")?.as_slice::<f32>()?.iter().sum();
            Ok(ctx.feed("x")?.scalar::<f32>()? + y)
        })
        .unwrap();
    assert_eq!(sum, 6.0);
}

#[test]
fn a_notified_preemption_saves_and_stops() {
    let dir = Scratch::new("preempt");
    let mut w = [0f32; 1];
    let mut opts = Options::new().unwrap();
    opts.variable("w", &mut w, &[1]).unwrap().set_path(Opt::CheckpointDir, &dir.0).unwrap();
    let mut session = Session::monitored(Some(&opts), &[]).unwrap();
    step(&mut session, 1.0).unwrap();
    session.notify_preemption().unwrap();
    step(&mut session, 1.0).unwrap(); // D10: the run ends OK after the save
    assert!(session.should_stop() && session.preempted());
    session.close().unwrap();
    assert!(trainwatch::latest_checkpoint(&dir.0).unwrap().unwrap().ends_with("model.ckpt-2"));
}

#[test]
fn the_session_saves_through_its_own_saver_on_request() {
    // C27: a session that only restores saves into its directory on request (its first save locks it).
    let dir = Scratch::new("save_checkpoint");
    let mut w = [0f32; 1];
    let mut opts = Options::new().unwrap();
    opts.variable("w", &mut w, &[1]).unwrap().set_path(Opt::CheckpointDir, &dir.0).unwrap();
    let mut session = Session::monitored(Some(&opts), &[]).unwrap();
    step(&mut session, 1.0).unwrap();
    let path = session.save_checkpoint(dir.0.join("model.ckpt"), Some(7)).unwrap();
    assert!(path.ends_with("model.ckpt-7"), "{:?}", path);
    assert_eq!(trainwatch::latest_checkpoint(&dir.0).unwrap().unwrap(), path);
    let elsewhere = Scratch::new("save_checkpoint_elsewhere");
    let error = session.save_checkpoint(elsewhere.0.join("model.ckpt"), None).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument, "{}", error);
    session.close().unwrap();
    assert_eq!(session.save_checkpoint(dir.0.join("model.ckpt"), None).unwrap_err().code(), Code::FailedPrecondition);
}

#[test]
fn numerics_count_and_check() {
    let values = [1f32, f32::NAN, f32::INFINITY, 3.0];
    let view = View::new("v", &values, &[4]).unwrap();
    assert!(trainwatch::has_nonfinite(&view).unwrap());
    let stats = trainwatch::stats(&view).unwrap();
    assert_eq!(
        (stats.finite_count, stats.nan_count, stats.pos_inf_count, stats.first_nonfinite_index),
        (2, 1, 1, Some(1))
    );
    assert_eq!((stats.min, stats.max, stats.mean), (1.0, 3.0, 2.0));
    let error = trainwatch::check_numerics(&view, "bad gradient").unwrap_err();
    assert!(error.message().starts_with("bad gradient"), "{}", error);
    assert_eq!(trainwatch::element_count_of(&view), 4);
    assert!(!trainwatch::numerics_target().is_empty());
}
