//! `MonitoredTrainingSession`: TF's `tf.train.MonitoredTrainingSession(...)` as a builder whose
//! setters are TF's arguments.
use std::path::Path;

use crate::error::Result;
use crate::hook::Hook;
use crate::options::{Opt, Options};
use crate::session::Session;
use crate::tensor::Element;

/// Builds a `Session` as `tf.train.MonitoredTrainingSession` does: a chief restores the newest good
/// checkpoint of `checkpoint_dir` and runs `chief_only_hooks`, a StepCounterHook, a SummarySaverHook
/// and a CheckpointSaverHook (each when its directory and frequency are set), then `hooks`; a worker
/// waits for the chief and runs `hooks` only. Arguments left alone keep TF's defaults (checkpoints
/// every 600 s, summaries and step-count logging every 100 steps); `None` is TF's `None`.
///
/// ```no_run
/// # fn main() -> trainwatch::Result<()> {
/// use trainwatch::{MonitoredTrainingSession, StopAtStepHook, View};
/// let mut w = [0f32; 4];
/// let stop = StopAtStepHook::last_step(100)?;
/// let mut session = MonitoredTrainingSession::new()
///     .checkpoint_dir("/tmp/ckpt")
///     .save_checkpoint_steps(Some(25))
///     .save_summaries_steps(None)
///     .variable("w", &mut w, &[4])
///     .hook(&stop)
///     .create()?;
/// while !session.should_stop() {
///     session.run(&[], |ctx| {
///         ctx.variable_mut::<f32>("w")?.iter_mut().for_each(|v| *v += 1.0);
///         Ok(())
///     })?;
/// }
/// session.close()?;
/// # Ok(()) }
/// ```
pub struct MonitoredTrainingSession<'v, 'h> {
    opts: Result<Options<'v>>,
    hooks: Vec<&'h Hook>,
    chief_only_hooks: Vec<&'h Hook>,
}

impl<'v, 'h> MonitoredTrainingSession<'v, 'h> {
    pub fn new() -> Self {
        MonitoredTrainingSession { opts: Options::new(), hooks: Vec::new(), chief_only_hooks: Vec::new() }
    }

    /// Starts from `opts` (options set there stay; variables registered there are trained).
    pub fn with_options(opts: Options<'v>) -> Self {
        MonitoredTrainingSession { opts: Ok(opts), hooks: Vec::new(), chief_only_hooks: Vec::new() }
    }

    /// Applies a setter; the first failure is kept and returned by `create`.
    fn set(mut self, f: impl FnOnce(&mut Options<'v>) -> Result<()>) -> Self {
        if let Ok(opts) = self.opts.as_mut() {
            if let Err(e) = f(opts) {
                self.opts = Err(e);
            }
        }
        self
    }

    fn frequency_i64(self, key: Opt, value: Option<i64>) -> Self {
        self.set(|o| match value {
            Some(v) => o.set_i64(key, v).map(drop),
            None => o.set_none(key).map(drop),
        })
    }

    fn frequency_f64(self, key: Opt, value: Option<f64>) -> Self {
        self.set(|o| match value {
            Some(v) => o.set_f64(key, v).map(drop),
            None => o.set_none(key).map(drop),
        })
    }

    /// Default true (or rank 0 in a job with a collective).
    pub fn is_chief(self, chief: bool) -> Self {
        self.set(|o| o.set_bool(Opt::IsChief, chief).map(drop))
    }
    pub fn checkpoint_dir(self, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref().to_path_buf();
        self.set(|o| o.set_path(Opt::CheckpointDir, dir).map(drop))
    }
    /// Default: `checkpoint_dir`.
    pub fn summary_dir(self, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref().to_path_buf();
        self.set(|o| o.set_path(Opt::SummaryDir, dir).map(drop))
    }
    pub fn save_checkpoint_steps(self, steps: Option<i64>) -> Self {
        self.frequency_i64(Opt::CheckpointEveryNSteps, steps)
    }
    pub fn save_checkpoint_secs(self, secs: Option<f64>) -> Self {
        self.frequency_f64(Opt::CheckpointEveryNSecs, secs)
    }
    pub fn save_summaries_steps(self, steps: Option<i64>) -> Self {
        self.frequency_i64(Opt::SummaryEveryNSteps, steps)
    }
    pub fn save_summaries_secs(self, secs: Option<f64>) -> Self {
        self.frequency_f64(Opt::SummaryEveryNSecs, secs)
    }
    /// Default 100; `None` adds no StepCounterHook.
    pub fn log_step_count_steps(self, steps: Option<i64>) -> Self {
        self.set(|o| o.set_i64(Opt::StepCountEveryNSteps, steps.unwrap_or(0)).map(drop))
    }
    /// How long a worker waits for the chief (default 7200 s; `None`: forever).
    pub fn max_wait_secs(self, secs: Option<f64>) -> Self {
        self.set(|o| o.set_f64(Opt::MaxWaitSecs, secs.unwrap_or(-1.0)).map(drop))
    }
    pub fn max_to_keep(self, n: i64) -> Self {
        self.set(|o| o.set_i64(Opt::MaxToKeep, n).map(drop))
    }
    pub fn keep_checkpoint_every_n_hours(self, hours: f64) -> Self {
        self.set(|o| o.set_f64(Opt::KeepCheckpointEveryNHours, hours).map(drop))
    }
    /// Any other option (`Opt::AsyncCheckpoint`, `Opt::CatchPreemptionSignals`, …).
    pub fn option_i64(self, key: Opt, value: i64) -> Self {
        self.set(|o| o.set_i64(key, value).map(drop))
    }
    pub fn option_f64(self, key: Opt, value: f64) -> Self {
        self.set(|o| o.set_f64(key, value).map(drop))
    }
    pub fn option_str(self, key: Opt, value: &str) -> Self {
        let value = value.to_string();
        self.set(|o| o.set_str(key, &value).map(drop))
    }
    /// Registers a variable (zero copy, restored in place).
    pub fn variable<T: Element>(self, name: &str, data: &'v mut [T], shape: &[i64]) -> Self {
        let shape = shape.to_vec();
        self.set(move |o| o.variable(name, data, &shape).map(drop))
    }
    /// Runs on every process, after the default hooks.
    pub fn hook(mut self, hook: &'h Hook) -> Self {
        self.hooks.push(hook);
        self
    }
    /// Runs on the chief only, before the default hooks.
    pub fn chief_only_hook(mut self, hook: &'h Hook) -> Self {
        self.chief_only_hooks.push(hook);
        self
    }
    /// Creates the session: `begin`, restore or initialise, `after_create_session`.
    pub fn create(self) -> Result<Session<'v>> {
        let opts = self.opts?;
        Session::monitored_training(Some(&opts), &self.hooks, &self.chief_only_hooks)
    }
}

impl Default for MonitoredTrainingSession<'_, '_> {
    fn default() -> Self {
        MonitoredTrainingSession::new()
    }
}
