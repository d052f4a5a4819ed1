//! Checkpoints outside a session: `Saver` (TF's `tf.train.Saver`) and reading checkpoint files
//! (`list_variables`, `load_variable`, `verify`), as `tf.train.list_variables` / `load_variable`.
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use crate::builtin::c_path;
use crate::error::{c_string, check, guard, Code, Error, Result};
use crate::options::Options;
use crate::sys;
use crate::tensor::{c_view, check_holds, DType, Element, Tensor};

/// A variable a `Saver` saves from and restores into: a name, and the caller's buffer, borrowed
/// mutably for `'v` (zero copy).
#[derive(Debug)]
pub struct Variable<'v> {
    name: CString,
    dtype: DType,
    data: *mut c_void,
    shape: Vec<i64>,
    _borrow: PhantomData<&'v mut [u8]>,
}

impl<'v> Variable<'v> {
    pub fn new<T: Element>(name: &str, data: &'v mut [T], shape: &[i64]) -> Result<Variable<'v>> {
        check_holds("variable", name, shape, data.len())?;
        Ok(Variable {
            name: c_string("variable name", name)?,
            dtype: T::DTYPE,
            data: data.as_mut_ptr() as *mut c_void,
            shape: shape.to_vec(),
            _borrow: PhantomData,
        })
    }

    fn raw(&self) -> sys::tw_tensor {
        c_view(&self.name, self.dtype, self.data, &self.shape)
    }
}

/// TF's `tf.train.Saver(var_list)`: saves the variables to `<prefix>-<step>`, keeps the newest
/// `max_to_keep`, restores into the buffers in place. A saver that saves holds its directory's lock
/// until dropped. `'v` is the borrow of the variables.
#[derive(Debug)]
pub struct Saver<'v> {
    raw: NonNull<sys::tw_saver>,
    _variables: PhantomData<&'v mut [u8]>,
}

// SAFETY: a saver is used by one thread at a time (`&mut self`), and its variables are plain numbers.
unsafe impl Send for Saver<'_> {}

fn copied(path: *const c_char) -> Option<PathBuf> {
    if path.is_null() {
        None
    } else {
        // SAFETY: a NUL-terminated string valid until the next call on the saver; copied now.
        Some(PathBuf::from(unsafe { CStr::from_ptr(path) }.to_string_lossy().as_ref()))
    }
}

impl<'v> Saver<'v> {
    /// A saver over `variables` (their buffers stay borrowed for `'v`).
    pub fn new(variables: Vec<Variable<'v>>) -> Result<Saver<'v>> {
        let raw_views: Vec<sys::tw_tensor> = variables.iter().map(Variable::raw).collect();
        let mut raw = ptr::null_mut();
        // SAFETY: the views are copied, the data borrowed for 'v (self keeps the borrow).
        check(unsafe { sys::tw_saver_create(&mut raw, raw_views.as_ptr(), raw_views.len()) })?;
        Saver::from_created(raw)
    }

    /// The saver a session made from `opts` would hold: its variables and shards, collective and
    /// retention options.
    pub fn from_options(opts: &Options<'v>) -> Result<Saver<'v>> {
        let mut raw = ptr::null_mut();
        // SAFETY: valid pointers; the saver borrows the variables, as `opts` does, for 'v.
        check(unsafe { sys::tw_saver_create_from_options(&mut raw, opts.as_ptr()) })?;
        Saver::from_created(raw)
    }

    fn from_created(raw: *mut sys::tw_saver) -> Result<Saver<'v>> {
        NonNull::new(raw)
            .map(|raw| Saver { raw, _variables: PhantomData })
            .ok_or_else(|| Error::new(Code::Internal, "the library returned a NULL saver"))
    }

    /// Default 5; 0 keeps every checkpoint.
    pub fn set_max_to_keep(&mut self, n: i64) -> Result<&mut Self> {
        // SAFETY: a live saver.
        check(unsafe { sys::tw_saver_set_max_to_keep(self.raw.as_ptr(), n) })?;
        Ok(self)
    }
    pub fn set_keep_checkpoint_every_n_hours(&mut self, hours: f64) -> Result<&mut Self> {
        // SAFETY: a live saver.
        check(unsafe { sys::tw_saver_set_keep_checkpoint_every_n_hours(self.raw.as_ptr(), hours) })?;
        Ok(self)
    }
    /// TF's `write_meta_graph=False`-era padding: "<prefix>-00000042".
    pub fn set_pad_step_number(&mut self, pad: bool) -> Result<&mut Self> {
        // SAFETY: a live saver.
        check(unsafe { sys::tw_saver_set_pad_step_number(self.raw.as_ptr(), pad as c_int) })?;
        Ok(self)
    }
    /// Overwrite evicted checkpoints' files in place (see `Opt::CheckpointRecycleFiles` for the risk).
    pub fn set_recycle_files(&mut self, recycle: bool) -> Result<&mut Self> {
        // SAFETY: a live saver.
        check(unsafe { sys::tw_saver_set_recycle_files(self.raw.as_ptr(), recycle as c_int) })?;
        Ok(self)
    }

    /// Saves to `<prefix>-<global_step>` (`prefix` itself for `None`) and records it in the
    /// directory's state file; returns the checkpoint's path (`None` for a saver without variables).
    pub fn save(&mut self, prefix: impl AsRef<Path>, global_step: Option<i64>) -> Result<Option<PathBuf>> {
        let prefix = c_path("prefix", prefix.as_ref())?;
        let mut out = ptr::null();
        // SAFETY: valid pointers; the variables are borrowed by self and not changed during the call.
        check(unsafe {
            sys::tw_saver_save(&mut out, self.raw.as_ptr(), prefix.as_ptr(), global_step.unwrap_or(sys::TW_UNSET))
        })?;
        Ok(copied(out))
    }

    /// Restores every variable from the checkpoint at `path`, in place.
    pub fn restore(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path("path", path.as_ref())?;
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_saver_restore(self.raw.as_ptr(), path.as_ptr()) })
    }

    /// Restores only the named variables.
    pub fn restore_variables<S: AsRef<str>>(&mut self, path: impl AsRef<Path>, names: &[S]) -> Result<()> {
        let path = c_path("path", path.as_ref())?;
        let names = names.iter().map(|n| c_string("variable name", n.as_ref())).collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY: valid pointers for the call.
        check(unsafe {
            sys::tw_saver_restore_variables(self.raw.as_ptr(), path.as_ptr(), pointers.as_ptr(), pointers.len())
        })
    }

    /// Restores the newest checkpoint of `dir` that reads back intact, skipping damaged ones; returns
    /// its path.
    pub fn restore_newest_good(&mut self, dir: impl AsRef<Path>) -> Result<PathBuf> {
        let dir = c_path("dir", dir.as_ref())?;
        let mut out = ptr::null();
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_saver_restore_newest_good(&mut out, self.raw.as_ptr(), dir.as_ptr()) })?;
        copied(out).ok_or_else(|| Error::new(Code::Internal, "restored without a path"))
    }

    /// TF's `recover_last_checkpoints`: takes the kept list from `dir`'s state file (repairing it).
    pub fn recover_last_checkpoints(&mut self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = c_path("dir", dir.as_ref())?;
        // SAFETY: valid pointers.
        check(unsafe { sys::tw_saver_recover_last_checkpoints(self.raw.as_ptr(), dir.as_ptr()) })
    }

    /// TF's `last_checkpoints`: the kept checkpoints, oldest first.
    pub fn last_checkpoints(&self) -> Result<Vec<PathBuf>> {
        let saver = self.raw.as_ptr();
        // SAFETY: a live saver; each path is copied at once.
        let paths: Vec<String> = unsafe {
            crate::list::collect(sys::tw_saver_last_checkpoint_count(saver), |i, path| {
                sys::tw_saver_last_checkpoint_at(path, saver, i)
            })
        }?;
        Ok(paths.into_iter().map(PathBuf::from).collect())
    }
}

impl Drop for Saver<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once; releases the directory's lock.
        unsafe { sys::tw_saver_destroy(self.raw.as_ptr()) }
    }
}

/// A tensor of a checkpoint, as listed (no data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointVariable {
    pub name: String,
    pub dtype: Option<DType>,
    pub shape: Vec<i64>,
}

struct VariableList(NonNull<sys::tw_checkpoint_variables>);

impl Drop for VariableList {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::tw_checkpoint_variables_destroy(self.0.as_ptr()) }
    }
}

/// `tf.train.list_variables(path)`: every tensor of the checkpoint at `path`, from its index.
pub fn list_variables(path: impl AsRef<Path>) -> Result<Vec<CheckpointVariable>> {
    let path = c_path("path", path.as_ref())?;
    let mut raw = ptr::null_mut();
    // SAFETY: valid pointers.
    check(unsafe { sys::tw_checkpoint_list_variables(&mut raw, path.as_ptr()) })?;
    let list = VariableList(NonNull::new(raw).ok_or_else(|| Error::new(Code::Internal, "NULL list"))?);
    let n = unsafe { sys::tw_checkpoint_variables_count(list.0.as_ptr()) };
    (0..n)
        .map(|i| {
            let mut view = sys::tw_tensor::init();
            // SAFETY: a live list; its strings and shapes are copied before it is freed.
            check(unsafe { sys::tw_checkpoint_variables_at(&mut view, list.0.as_ptr(), i) })?;
            let tensor = unsafe { crate::tensor::TensorRef::from_raw(view) };
            Ok(CheckpointVariable {
                name: tensor.name().to_string(),
                dtype: tensor.dtype(),
                shape: tensor.shape().to_vec(),
            })
        })
        .collect()
}

/// `tf.train.load_variable(path, name)`: a copy of one tensor of the checkpoint at `path`.
pub fn load_variable(path: impl AsRef<Path>, name: &str) -> Result<Tensor> {
    let path = path.as_ref();
    let listed = list_variables(path)?.into_iter().find(|v| v.name == name).ok_or_else(|| {
        Error::new(Code::NotFound, format!("Key {} not found in checkpoint {}", name, path.display()))
    })?;
    let dtype =
        listed.dtype.ok_or_else(|| Error::invalid(format!("'{}' has a dtype this crate does not know", name)))?;
    let tensor = Tensor::zeros(name, dtype, &listed.shape)?;
    let c_path = c_path("path", path)?;
    let raw = tensor.raw();
    // SAFETY: the destination is the tensor's own buffer, of the listed dtype and shape; the
    // library writes into it during the call only.
    check(unsafe { sys::tw_checkpoint_load_variable(c_path.as_ptr(), &raw) })?;
    Ok(tensor)
}

/// Reads the whole checkpoint at `path` and checks every checksum: `Ok` when intact, else the
/// damage (`Code::DataLoss`, …).
pub fn verify(path: impl AsRef<Path>) -> Result<()> {
    let path = c_path("path", path.as_ref())?;
    // SAFETY: valid pointers.
    check(unsafe { sys::tw_checkpoint_verify(path.as_ptr()) })
}

/// Rewrites a checkpoint of an older format at `from` as the current format at `to`.
pub fn upgrade(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<()> {
    let from = c_path("from", from.as_ref())?;
    let to = c_path("to", to.as_ref())?;
    // SAFETY: valid pointers.
    check(unsafe { sys::tw_checkpoint_upgrade(from.as_ptr(), to.as_ptr()) })
}

/// What a long save or restore reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// True for a save, false for a restore.
    pub save: bool,
    pub path: PathBuf,
    pub bytes_done: i64,
    pub bytes_total: i64,
    pub elapsed_secs: f64,
    pub finished: bool,
}

type ProgressFn = Box<dyn Fn(&Progress) + Send + Sync>;

unsafe extern "C" fn progress_trampoline(
    user: *mut c_void,
    kind: i32,
    path: *const c_char,
    bytes_done: i64,
    bytes_total: i64,
    elapsed_secs: f64,
    finished: c_int,
) {
    let _ = guard(|| {
        let sink = &*(user as *const ProgressFn);
        sink(&Progress {
            save: kind == sys::TW_PROGRESS_SAVE,
            path: PathBuf::from(CStr::from_ptr(path).to_string_lossy().as_ref()),
            bytes_done,
            bytes_total,
            elapsed_secs,
            finished: finished != 0,
        });
        Ok(())
    });
}

/// Reports checkpoint saves and restores every `every_n_secs` while they run (and when they end) to
/// `sink`, from whichever thread does the work; `None` removes the sink. A sink is never freed (a
/// background save may still be calling one that was replaced): install one per process, not per run.
pub fn set_progress_sink<F>(every_n_secs: f64, sink: Option<F>) -> Result<()>
where
    F: Fn(&Progress) + Send + Sync + 'static,
{
    let (callback, user): (Option<sys::tw_progress_fn>, *mut c_void) = match sink {
        Some(f) => {
            let boxed: ProgressFn = Box::new(f);
            (Some(progress_trampoline), Box::into_raw(Box::new(boxed)) as *mut c_void)
        }
        None => (None, ptr::null_mut()),
    };
    // SAFETY: `user` is leaked: valid for the rest of the process.
    check(unsafe { sys::tw_set_progress_sink(every_n_secs, callback, user) })
}
