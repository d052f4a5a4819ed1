//! The experimental parts of the C API (`TW_EXPERIMENTAL_API` in C: outside the ABI promise, they
//! may still change): the collective seam — a job's own engine (MPI, NCCL's CPU group, a launcher's)
//! brought in as a trait — and the built-in hooks' extension points (TF's protected methods).
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

use crate::callback::{destroy_boxed, into_user, reclaim, user_of};
use crate::error::{check, guard, Result};
use crate::hook::Hook;
use crate::options::Options;
use crate::session::SessionRef;
use crate::sys;
use crate::tensor::TensorRef;

/// How `Collective::allreduce_i64` combines the ranks' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
}

/// A job's communication engine, as the library needs it: every rank of the job calls the same
/// operations in the same order. `timeout_secs` < 0 means no limit; an operation that does not
/// complete in time returns `Code::DeadlineExceeded` (or `Unavailable` for a dead peer) rather than
/// hang. Called from the thread running the session or saver, and from the background checkpoint
/// thread, one call at a time (the crate serialises them).
pub trait Collective: Send {
    /// This process's rank, 0 ≤ rank < world_size; rank 0 is the chief unless `Opt::IsChief` says
    /// otherwise.
    fn rank(&self) -> i32;
    fn world_size(&self) -> i32;
    /// Combines `values` element-wise over every rank, in place.
    fn allreduce_i64(&mut self, values: &mut [i64], op: ReduceOp, timeout_secs: f64) -> Result<()>;
    /// Copies `root`'s `data` into every other rank's `data` (same length on every rank).
    fn broadcast(&mut self, data: &mut [u8], root: i32, timeout_secs: f64) -> Result<()>;
    /// Returns once every rank has called it.
    fn barrier(&mut self, timeout_secs: f64) -> Result<()>;
}

type Engine = Mutex<Box<dyn Collective>>;

fn engine<'a>(user: *mut c_void) -> std::sync::MutexGuard<'a, Box<dyn Collective>> {
    // SAFETY: `user` is the Engine made by `set_collective`, alive until the library destroys it.
    let engine = unsafe { &*(user as *const Engine) };
    engine.lock().unwrap_or_else(|e| e.into_inner())
}

unsafe extern "C" fn allreduce(
    user: *mut c_void,
    values: *mut i64,
    count: usize,
    op: i32,
    timeout: f64,
) -> sys::tw_status {
    guard(|| {
        let op = match op {
            sys::TW_REDUCE_MIN => ReduceOp::Min,
            sys::TW_REDUCE_MAX => ReduceOp::Max,
            _ => ReduceOp::Sum,
        };
        let values = if count == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(values, count) };
        engine(user).allreduce_i64(values, op, timeout)
    })
}
unsafe extern "C" fn broadcast(
    user: *mut c_void,
    data: *mut c_void,
    size: usize,
    root: i32,
    timeout: f64,
) -> sys::tw_status {
    guard(|| {
        let data = if size == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(data as *mut u8, size) };
        engine(user).broadcast(data, root, timeout)
    })
}
unsafe extern "C" fn barrier(user: *mut c_void, timeout: f64) -> sys::tw_status {
    guard(|| engine(user).barrier(timeout))
}

impl Options<'_> {
    /// Makes sessions and savers created from these options one rank of a job that talks through
    /// `collective` (experimental). The options own it from now on; it is dropped with the last
    /// session, saver or options object using it.
    pub fn set_collective<C: Collective + 'static>(&mut self, collective: C) -> Result<&mut Self> {
        let (rank, world_size) = (collective.rank(), collective.world_size());
        let boxed: Box<dyn Collective> = Box::new(collective);
        let user = into_user::<Engine>(Mutex::new(boxed));
        let table = sys::tw_collective {
            struct_size: std::mem::size_of::<sys::tw_collective>() as u32,
            rank,
            world_size,
            allreduce_int64: Some(allreduce),
            broadcast: Some(broadcast),
            barrier: Some(barrier),
            destroy: Some(destroy_boxed::<Engine>),
        };
        // SAFETY: the table is copied; on success the options own `user` (destroy frees it).
        let status = unsafe { sys::tw_options_set_collective(self.as_mut_ptr(), &table, user) };
        if status != sys::TW_OK {
            // SAFETY: not taken.
            unsafe { reclaim::<Engine>(user) };
        }
        check(status)?;
        Ok(self)
    }
}

// ------------------------------------------------------------------------------------------------
// The built-in hooks' extension points
// ------------------------------------------------------------------------------------------------

type SaveFn = Box<dyn FnMut(&Hook, &SessionRef<'_>, i64) -> Result<bool> + Send>;
type LogFn = Box<dyn FnMut(&Hook, &[TensorRef<'_>]) -> Result<()> + Send>;
type RecordFn = Box<dyn FnMut(&Hook, i64, f64, i64) -> Result<()> + Send>;

/// A borrowed `Hook` for a callback: not released when it goes.
fn borrowed(hook: *mut sys::tw_hook) -> std::mem::ManuallyDrop<Hook> {
    std::mem::ManuallyDrop::new(Hook::from_created(hook).expect("the library passes its hook"))
}

unsafe extern "C" fn save_trampoline(
    user: *mut c_void,
    hook: *mut sys::tw_hook,
    session: *mut sys::tw_session,
    step: i64,
    stop: *mut c_int,
) -> sys::tw_status {
    guard(|| {
        let hook = borrowed(hook);
        if (user_of::<SaveFn>(user))(&hook, &SessionRef::from_raw(session), step)? && !stop.is_null() {
            *stop = 1;
        }
        Ok(())
    })
}

unsafe extern "C" fn log_trampoline(
    user: *mut c_void,
    hook: *mut sys::tw_hook,
    values: *const *const sys::tw_tensor,
    n_values: usize,
) -> sys::tw_status {
    guard(|| {
        let hook = borrowed(hook);
        let views: Vec<TensorRef<'_>> = (0..n_values).map(|i| TensorRef::from_raw(**values.add(i))).collect();
        (user_of::<LogFn>(user))(&hook, &views)
    })
}

unsafe extern "C" fn record_trampoline(
    user: *mut c_void,
    hook: *mut sys::tw_hook,
    steps: i64,
    time: f64,
    global_step: i64,
) -> sys::tw_status {
    guard(|| {
        let hook = borrowed(hook);
        (user_of::<RecordFn>(user))(&hook, steps, time, global_step)
    })
}

impl Hook {
    /// CheckpointSaverHook's `_save(session, step)` overridden (experimental): `save` runs in place
    /// of every save and returns whether to stop; call `checkpoint_saver_save` inside it for the
    /// built-in save (TF's `super()._save`). Set it before the hook joins a session.
    pub fn set_checkpoint_save_fn<F>(&self, save: F) -> Result<()>
    where
        F: FnMut(&Hook, &SessionRef<'_>, i64) -> Result<bool> + Send + 'static,
    {
        let boxed: SaveFn = Box::new(save);
        let user = into_user(boxed);
        // SAFETY: on success the hook owns `user`.
        let status = unsafe {
            sys::tw_checkpoint_saver_hook_set_save_fn(
                self.as_ptr(),
                Some(save_trampoline),
                user,
                Some(destroy_boxed::<SaveFn>),
            )
        };
        if status != sys::TW_OK {
            unsafe { reclaim::<SaveFn>(user) };
        }
        check(status)
    }

    /// The built-in CheckpointSaverHook save (TF's `_save`), from a save function: whether a
    /// listener asked to stop.
    pub fn checkpoint_saver_save(&self, session: &SessionRef<'_>, step: i64) -> Result<bool> {
        let mut stop = 0;
        // SAFETY: valid pointers; the library checks where it is called from.
        check(unsafe { sys::tw_checkpoint_saver_hook_save(&mut stop, self.as_ptr(), session.as_ptr(), step) })?;
        Ok(stop != 0)
    }

    /// LoggingTensorHook's `_log_tensors(tensor_values)` overridden (experimental).
    pub fn set_log_tensors_fn<F>(&self, log: F) -> Result<()>
    where
        F: FnMut(&Hook, &[TensorRef<'_>]) -> Result<()> + Send + 'static,
    {
        let boxed: LogFn = Box::new(log);
        let user = into_user(boxed);
        // SAFETY: on success the hook owns `user`.
        let status = unsafe {
            sys::tw_logging_tensor_hook_set_log_fn(
                self.as_ptr(),
                Some(log_trampoline),
                user,
                Some(destroy_boxed::<LogFn>),
            )
        };
        if status != sys::TW_OK {
            unsafe { reclaim::<LogFn>(user) };
        }
        check(status)
    }

    /// The built-in LoggingTensorHook line for `values` (TF's `super()._log_tensors`), from inside
    /// the hook's log function; it also restarts the hook's timer.
    pub fn log_tensors(&self, values: &[TensorRef<'_>]) -> Result<()> {
        let raw: Vec<sys::tw_tensor> = values.iter().map(TensorRef::raw).collect();
        let pointers: Vec<*const sys::tw_tensor> = raw.iter().map(|v| v as *const _).collect();
        // SAFETY: valid for the call.
        check(unsafe { sys::tw_logging_tensor_hook_log_tensors(self.as_ptr(), pointers.as_ptr(), pointers.len()) })
    }

    /// StepCounterHook's `_log_and_record(elapsed_steps, elapsed_time, global_step)` overridden
    /// (experimental).
    pub fn set_step_rate_fn<F>(&self, record: F) -> Result<()>
    where
        F: FnMut(&Hook, i64, f64, i64) -> Result<()> + Send + 'static,
    {
        let boxed: RecordFn = Box::new(record);
        let user = into_user(boxed);
        // SAFETY: on success the hook owns `user`.
        let status = unsafe {
            sys::tw_step_counter_hook_set_record_fn(
                self.as_ptr(),
                Some(record_trampoline),
                user,
                Some(destroy_boxed::<RecordFn>),
            )
        };
        if status != sys::TW_OK {
            unsafe { reclaim::<RecordFn>(user) };
        }
        check(status)
    }

    /// The built-in StepCounterHook log line and summary (TF's `super()._log_and_record`).
    pub fn step_counter_log_and_record(&self, elapsed_steps: i64, elapsed_time: f64, global_step: i64) -> Result<()> {
        // SAFETY: a live hook.
        check(unsafe {
            sys::tw_step_counter_hook_log_and_record(self.as_ptr(), elapsed_steps, elapsed_time, global_step)
        })
    }
}
