//! The parity scenario (tests/parity/README.md) in Rust: its trace must equal
//! tests/parity/expected.txt, which every language's binding compares against.
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use trainwatch::{Code, Hook, Opt, Options, RunContext, Session, SessionRef, SessionRunHook, View};

type Trace = Arc<Mutex<Vec<String>>>;

fn add(trace: &Trace, line: String) {
    trace.lock().unwrap().push(line);
}

/// Integral values in decimal, NaN as "nan".
fn number(value: f32) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else {
        format!("{:.0}", value)
    }
}

fn weights(w: &[f32]) -> String {
    w.iter().map(|&v| number(v)).collect::<Vec<_>>().join(",")
}

fn status_name<T>(result: &trainwatch::Result<T>) -> &'static str {
    match result {
        Ok(_) => "TW_OK",
        Err(error) => error.code().name(),
    }
}

/// The counting hook.
struct Counter {
    trace: Trace,
}

impl SessionRunHook for Counter {
    fn begin(&mut self, _session: &SessionRef<'_>) -> trainwatch::Result<()> {
        add(&self.trace, "begin".into());
        Ok(())
    }
    fn after_create_session(&mut self, session: &SessionRef<'_>) -> trainwatch::Result<()> {
        add(&self.trace, format!("after_create_session global_step={}", session.global_step()));
        Ok(())
    }
    fn before_run(&mut self, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        add(&self.trace, "before_run".into());
        ctx.request_fetch("loss")?;
        ctx.request_fetch("global_step")
    }
    fn after_run(&mut self, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        let loss = ctx.result("loss")?.scalar::<f32>()?;
        let step = ctx.result("global_step")?.scalar::<i64>()?;
        add(&self.trace, format!("after_run loss={} global_step={}", number(loss), step));
        Ok(())
    }
    fn end(&mut self, session: &SessionRef<'_>) -> trainwatch::Result<()> {
        add(&self.trace, format!("end global_step={}", session.global_step()));
        Ok(())
    }
    fn on_error(&mut self, _session: &SessionRef<'_>, error: Code) {
        add(&self.trace, format!("on_error {}", error.name()));
    }
}

/// One run of the model: w += x, loss = sum(w).
fn run_with_x(session: &mut Session<'_>, trace: &Trace, x: f32) -> trainwatch::Result<()> {
    let result = session.run(&[View::scalar("x", &x)?], |ctx| {
        let x = ctx.feed("x")?.scalar::<f32>()?;
        add(trace, format!("step global_step={} x={}", ctx.global_step(), number(x)));
        let w = ctx.variable_mut::<f32>("w")?;
        w.iter_mut().for_each(|v| *v += x);
        let loss: f32 = w.iter().sum();
        ctx.publish_scalar("loss", loss)
    });
    add(trace, format!("run {}", status_name(&result)));
    result
}

fn model_options<'v>(w: &'v mut [f32; 4], dir: Option<&Path>) -> trainwatch::Result<Options<'v>> {
    let mut opts = Options::new()?;
    opts.variable("w", w, &[4])?;
    if let Some(dir) = dir {
        opts.set_path(Opt::CheckpointDir, dir)?;
    }
    Ok(opts)
}

fn counter(trace: &Trace) -> trainwatch::Result<Hook> {
    Hook::new("counter", Counter { trace: trace.clone() })
}

fn phase_train(dir: &Path) -> trainwatch::Result<Vec<String>> {
    let trace = Trace::default();
    let mut w = [0f32; 4];
    {
        let mut opts = model_options(&mut w, Some(dir))?;
        opts.set_i64(Opt::EveryNSteps, 2)?.set_bool(Opt::AsyncCheckpoint, false)?;
        let hooks = [counter(&trace)?, Hook::stop_at_step(None, Some(5))?, Hook::checkpoint_saver(dir, &opts)?];
        let mut session = Session::monitored(Some(&opts), &[&hooks[0], &hooks[1], &hooks[2]])?;
        while !session.should_stop() {
            run_with_x(&mut session, &trace, 1.0)?;
        }
        add(&trace, format!("global_step={}", session.global_step()));
        let closed = session.close();
        add(&trace, format!("close {}", status_name(&closed)));
    }
    add(&trace, format!("w={}", weights(&w)));
    let latest = trainwatch::latest_checkpoint(dir)?.expect("a checkpoint was saved");
    add(&trace, format!("latest_checkpoint={}", latest.file_name().unwrap().to_string_lossy()));
    let lines = trace.lock().unwrap().clone();
    Ok(lines)
}

fn phase_nan() -> trainwatch::Result<Vec<String>> {
    let trace = Trace::default();
    let mut w = [0f32; 4];
    {
        let opts = model_options(&mut w, None)?;
        let hooks = [counter(&trace)?, Hook::nan_tensor("loss", true)?];
        let mut session = Session::monitored(Some(&opts), &[&hooks[0], &hooks[1]])?;
        run_with_x(&mut session, &trace, 1.0)?;
        run_with_x(&mut session, &trace, 1.0)?;
        let error = run_with_x(&mut session, &trace, f32::NAN).expect_err("NaN fails the run");
        assert_eq!(error.code(), Code::NanLoss);
        assert!(error.message().contains("NaN loss during training."), "{}", error);
        let error = run_with_x(&mut session, &trace, 1.0).expect_err("a failed session refuses runs");
        assert_eq!(error.code(), Code::FailedPrecondition);
        let closed = session.close();
        add(&trace, format!("close {}", status_name(&closed)));
    }
    add(&trace, format!("w={}", weights(&w)));
    let lines = trace.lock().unwrap().clone();
    Ok(lines)
}

fn phase_restore(dir: &Path) -> trainwatch::Result<Vec<String>> {
    let trace = Trace::default();
    let mut w = [0f32; 4];
    {
        let opts = model_options(&mut w, Some(dir))?;
        let hooks = [counter(&trace)?, Hook::stop_at_step(None, Some(6))?];
        let mut session = Session::monitored(Some(&opts), &[&hooks[0], &hooks[1]])?;
        add(&trace, format!("restored w={}", weights(session.variable::<f32>("w")?)));
        while !session.should_stop() {
            run_with_x(&mut session, &trace, 1.0)?;
        }
        let closed = session.close();
        add(&trace, format!("close {}", status_name(&closed)));
    }
    add(&trace, format!("w={}", weights(&w)));
    let lines = trace.lock().unwrap().clone();
    Ok(lines)
}

/// A MonitoredTrainingSession phase: save_checkpoint_steps=3, no summaries, no step counter.
fn phase_training_session(dir: &Path, last_step: i64) -> trainwatch::Result<Vec<String>> {
    let trace = Trace::default();
    let mut w = [0f32; 4];
    {
        let mut opts = model_options(&mut w, Some(dir))?;
        opts.set_bool(Opt::IsChief, true)?
            .set_i64(Opt::CheckpointEveryNSteps, 3)?
            .set_i64(Opt::SummaryEveryNSteps, 0)?
            .set_i64(Opt::StepCountEveryNSteps, 0)?;
        let hooks = [counter(&trace)?, Hook::stop_at_step(None, Some(last_step))?];
        let mut session = Session::monitored_training(Some(&opts), &[&hooks[0], &hooks[1]], &[])?;
        while !session.should_stop() {
            run_with_x(&mut session, &trace, 1.0)?;
        }
        let closed = session.close();
        add(&trace, format!("close {}", status_name(&closed)));
    }
    add(&trace, format!("w={}", weights(&w)));
    let latest = trainwatch::latest_checkpoint(dir)?.expect("a checkpoint was saved");
    add(&trace, format!("latest={}", latest.file_name().unwrap().to_string_lossy()));
    let lines = trace.lock().unwrap().clone();
    Ok(lines)
}

/// The sections of expected.txt: "[name]" headers, '#' comments and blank lines skipped.
fn expected() -> HashMap<String, Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/parity/expected.txt");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let mut sections: HashMap<String, Vec<String>> = HashMap::new();
    let mut current = None;
    for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if line.starts_with('[') && line.ends_with(']') {
            current = Some(line[1..line.len() - 1].to_string());
            sections.entry(current.clone().unwrap()).or_default();
        } else {
            let name = current.clone().expect("a line before the first section");
            sections.get_mut(&name).unwrap().push(line.to_string());
        }
    }
    sections
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tw_parity_rust_{}_{}", std::process::id(), name));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn parity_scenario_matches_expected_trace() {
    let expected = expected();
    let dir = scratch_dir("scenario");
    trainwatch::set_log_level(trainwatch::LogLevel::Error); // the scenario's warnings are expected
    let train = phase_train(&dir).expect("train phase");
    let nan = phase_nan().expect("nan phase");
    let restore = phase_restore(&dir).expect("restore phase");
    let mts_dir = scratch_dir("mts");
    let mts = phase_training_session(&mts_dir, 4).expect("mts phase");
    let mts_resume = phase_training_session(&mts_dir, 6).expect("mts_resume phase");
    trainwatch::set_log_level(trainwatch::LogLevel::Info);
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&mts_dir).unwrap();
    assert_eq!(train, expected["train"], "[train]");
    assert_eq!(nan, expected["nan"], "[nan]");
    assert_eq!(restore, expected["restore"], "[restore]");
    assert_eq!(mts, expected["mts"], "[mts]");
    assert_eq!(mts_resume, expected["mts_resume"], "[mts_resume]");
}
