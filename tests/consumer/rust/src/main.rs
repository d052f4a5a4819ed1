//! Trains under a MonitoredTrainingSession with StopAtStepHook, a NanTensorHook on the published loss
//! and checkpoints every 25 steps, until LAST_STEP; checks it started at START_STEP (a resumed run
//! restores the global step and w from the newest checkpoint) and that the newest checkpoint is LAST_STEP's.
//! With NAN_AT, the run of that global step feeds NaN and the program expects TW_NAN_LOSS.
//!
//! usage: train-loop CHECKPOINT_DIR LAST_STEP START_STEP [NAN_AT]
use std::process::exit;

use trainwatch::{Code, MonitoredTrainingSession, NanTensorHook, StopAtStepHook, View};

fn train(dir: &str, last_step: i64, start_step: i64, nan_at: Option<i64>) -> trainwatch::Result<String> {
    let mut w = [0f32; 4];
    let (started, ended);
    {
        let nan = NanTensorHook::new("loss").build()?;
        let stop = StopAtStepHook::last_step(last_step)?;
        let mut session = MonitoredTrainingSession::new()
            .checkpoint_dir(dir)
            .save_checkpoint_steps(Some(25))
            .save_summaries_steps(None)
            .log_step_count_steps(None)
            .variable("w", &mut w, &[4])
            .hook(&nan)
            .hook(&stop)
            .create()?;
        started = session.global_step();
        while !session.should_stop() {
            let x = if Some(session.global_step()) == nan_at { f32::NAN } else { 1.0f32 };
            let run = session.run(&[View::scalar("x", &x)?], |ctx| {
                let x = ctx.feed("x")?.scalar::<f32>()?;
                let w = ctx.variable_mut::<f32>("w")?;
                w.iter_mut().for_each(|v| *v += x);
                let loss: f32 = w.iter().sum();
                ctx.publish_scalar("loss", loss)
            });
            match run {
                Err(e) if e.code() == Code::NanLoss && nan_at.is_some() => {
                    return Ok(format!("NaN loss stopped training at step {}: {}", session.global_step(), e));
                }
                other => other?,
            }
        }
        ended = session.global_step();
        session.close()?;
    }
    if nan_at.is_some() {
        return Err(trainwatch::Error::new(Code::Internal, "the NaN loss did not fail the run"));
    }
    let latest = trainwatch::latest_checkpoint(dir)?.map(|p| p.display().to_string()).unwrap_or_default();
    let problems: Vec<String> = [
        (started == start_step, format!("started at step {}, not {}", started, start_step)),
        (ended == last_step, format!("ended at step {}, not {}", ended, last_step)),
        (w == [last_step as f32; 4], format!("w = {:?}: the restored w plus one per step is {}", w, last_step)),
        (latest.ends_with(&format!("model.ckpt-{}", last_step)), format!("latest checkpoint {:?}", latest)),
    ]
    .into_iter()
    .filter(|(ok, _)| !ok)
    .map(|(_, why)| why)
    .collect();
    if !problems.is_empty() {
        return Err(trainwatch::Error::new(Code::Internal, problems.join("; ")));
    }
    Ok(format!(
        "trained steps {}..{} with trainwatch {}, latest checkpoint {}",
        started,
        ended,
        trainwatch::version().1,
        latest
    ))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: train-loop CHECKPOINT_DIR LAST_STEP START_STEP [NAN_AT]");
        exit(2);
    }
    let number = |i: usize| args[i].parse::<i64>().unwrap_or_else(|_| panic!("not a number: {}", args[i]));
    let nan_at = if args.len() > 4 { Some(number(4)) } else { None };
    match train(&args[1], number(2), number(3), nan_at) {
        Ok(report) => println!("{}", report),
        Err(e) => {
            eprintln!("{}", e);
            exit(1);
        }
    }
}
