//! Helpers shared by the integration tests: scratch directories and the model of the parity
//! scenario (w += x, loss = sum(w)).
#![allow(dead_code)]
use std::fs;
use std::path::PathBuf;

use trainwatch::{Session, View};

/// A fresh directory under the system's temporary directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("tw_rust_{}_{}", std::process::id(), name));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// One run: w += x, publishes loss = sum(w).
pub fn step(session: &mut Session<'_>, x: f32) -> trainwatch::Result<()> {
    session.run(&[View::scalar("x", &x)?], |ctx| {
        let x = ctx.feed("x")?.scalar::<f32>()?;
        let w = ctx.variable_mut::<f32>("w")?;
        w.iter_mut().for_each(|v| *v += x);
        let loss: f32 = w.iter().sum();
        ctx.publish_scalar("loss", loss)
    })
}
