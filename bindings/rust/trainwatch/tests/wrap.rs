//! `Hook::wrap`: TF's subclass of a built-in hook (docs/ARCHITECTURE.md). A NanTensorHook "subclass" overriding
//! `after_run`, with and without `super()` (B33 kept or replaced), and `super().before_run` returning
//! the built-in's fetch (B31).
use std::sync::{Arc, Mutex};

use trainwatch::{Code, Hook, HookCallbacks, RunContext, Session, Super};

#[derive(Default)]
struct Seen {
    requests: Vec<String>,
    losses: Vec<f32>,
    custom_actions: u32,
    output_outside: Option<Code>,
}

/// `class NanTensorHookCustom(NanTensorHook)` overriding `before_run` (calling super) and `after_run`.
struct NanTensorHookCustom {
    call_super: bool,
    seen: Arc<Mutex<Seen>>,
}

impl HookCallbacks for NanTensorHookCustom {
    fn before_run(&mut self, inner: &Super, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        inner.before_run(ctx)?;
        self.seen.lock().unwrap().requests = ctx.requests()?;
        Ok(())
    }
    fn after_run(&mut self, inner: &Super, ctx: &mut RunContext<'_>) -> trainwatch::Result<()> {
        let loss = ctx.result("loss")?.scalar::<f32>()?;
        assert_eq!(ctx.session().output("loss")?.scalar::<f32>()?.to_bits(), loss.to_bits());
        {
            let mut seen = self.seen.lock().unwrap();
            seen.losses.push(loss);
            if loss.is_nan() {
                seen.custom_actions += 1;
            }
        }
        if self.call_super {
            inner.after_run(ctx)?;
        }
        Ok(())
    }
}

fn run_with_nan(call_super: bool) -> (Arc<Mutex<Seen>>, Vec<trainwatch::Result<()>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let inner = Hook::nan_tensor("loss", true).unwrap();
    let hook = Hook::wrap(&inner, NanTensorHookCustom { call_super, seen: seen.clone() }).unwrap();
    assert_eq!(hook.name(), "NanTensorHook");
    drop(inner); // the wrapper keeps it
    let mut session = Session::monitored(None, &[&hook]).unwrap();
    let losses = [0.5f32, f32::NAN, 0.25];
    let results = losses.iter().map(|&loss| session.run(&[], |ctx| ctx.publish_scalar("loss", loss))).collect();
    // Between runs no output is readable.
    seen.lock().unwrap().output_outside = session.output("loss").err().map(|e| e.code());
    (seen, results)
}

#[test]
fn subclass_calling_super_detects_nan_and_fails_b33() {
    let (seen, results) = run_with_nan(true);
    assert!(results[0].is_ok());
    let error = results[1].as_ref().unwrap_err();
    assert_eq!(error.code(), Code::NanLoss);
    assert!(error.message().contains("NaN loss during training."), "{}", error.message());
    // A failed session refuses later runs.
    assert_eq!(results[2].as_ref().unwrap_err().code(), Code::FailedPrecondition);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.requests, vec!["loss".to_string()]);
    assert_eq!(seen.custom_actions, 1);
}

#[test]
fn subclass_without_super_runs_its_own_action_only() {
    let (seen, results) = run_with_nan(false);
    assert!(results.iter().all(|r| r.is_ok()));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.losses.len(), 3);
    assert_eq!(seen.custom_actions, 1);
    // Between runs no output is readable.
    assert_eq!(seen.output_outside, Some(Code::FailedPrecondition));
}

#[test]
fn a_wrapped_hook_runs_through_its_wrapper_only() {
    struct Nothing;
    impl HookCallbacks for Nothing {}
    let inner = Hook::nan_tensor("loss", true).unwrap();
    let hook = Hook::wrap_named("mine", &inner, Nothing).unwrap();
    assert_eq!(hook.name(), "mine");
    let error = Session::monitored(None, &[&inner, &hook]).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(error.message().contains("wraps hooks[0]"), "{}", error.message());
}
