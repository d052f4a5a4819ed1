//! `Session` is `Send`: the header lets a session move between threads (one at a time). Its Rust
//! hooks run on the thread running it; the hook handle, left behind, is refused by a new session
//! while the moved one holds it, and accepted once that session is closed.
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use trainwatch::{Code, Hook, Options, Session, SessionRef, SessionRunHook};

fn assert_send<T: Send>() {}

#[test]
fn session_is_send() {
    assert_send::<Session<'static>>();
}

/// Records each callback with the thread it ran on.
struct ThreadRecorder(Arc<Mutex<Vec<(&'static str, ThreadId)>>>);

impl ThreadRecorder {
    fn record(&self, name: &'static str) -> trainwatch::Result<()> {
        self.0.lock().unwrap().push((name, thread::current().id()));
        Ok(())
    }
}

impl SessionRunHook for ThreadRecorder {
    fn begin(&mut self, _: &SessionRef<'_>) -> trainwatch::Result<()> {
        self.record("begin")
    }
    fn after_run(&mut self, _: &mut trainwatch::RunContext<'_>) -> trainwatch::Result<()> {
        self.record("after_run")
    }
    fn end(&mut self, _: &SessionRef<'_>) -> trainwatch::Result<()> {
        self.record("end")
    }
}

#[test]
fn a_session_moves_to_another_thread_and_back() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let hook = Hook::new("threads", ThreadRecorder(log.clone())).unwrap();
    let mut w = [0i64];
    let mut opts = Options::new().unwrap();
    opts.variable("w", &mut w, &[1]).unwrap();
    let mut session = Session::monitored(Some(&opts), &[&hook]).unwrap();
    drop(opts);
    session.run(&[], |_| Ok(())).unwrap();
    let here = thread::current().id();
    let (worker, closer) = thread::scope(|scope| {
        let (mut session, worker) = scope
            .spawn(move || {
                session
                    .run(&[], |ctx| {
                        ctx.variable_mut::<i64>("w")?[0] = 7;
                        Ok(())
                    })
                    .unwrap();
                (session, thread::current().id())
            })
            .join()
            .unwrap();
        // Back here, still open: it holds the hook.
        assert_eq!(session.global_step(), 2);
        assert_eq!(Session::monitored(None, &[&hook]).unwrap_err().code(), Code::FailedPrecondition);
        let closer = scope
            .spawn(move || {
                session.close().unwrap();
                thread::current().id()
            })
            .join()
            .unwrap();
        (worker, closer)
    });
    assert_eq!(w, [7]);
    assert_ne!(worker, here);
    let expected = [("begin", here), ("after_run", here), ("after_run", worker), ("end", closer)];
    assert_eq!(*log.lock().unwrap(), expected);
    // Closed on another thread: the hook may join a new session on this one.
    let mut again = Session::monitored(None, &[&hook]).unwrap();
    again.close().unwrap();
    assert_eq!(log.lock().unwrap().len(), expected.len() + 2);
}
