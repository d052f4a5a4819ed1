//! Element types, borrowed views handed to the library (`View`), and views the library hands back
//! (`TensorRef`).
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::mem;
use std::os::raw::c_void;
use std::ptr;
use std::slice;

use crate::error::{c_string, Error, Result};
use crate::sys;

/// `tw_dtype`: the element types the library knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    F8E4M3FN,
    F8E5M2,
}

const DTYPES: [DType; 15] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::F8E4M3FN,
    DType::F8E5M2,
];

impl DType {
    /// The `tw_dtype` value (stable: `Bool` = 1 … `F8E5M2` = 15).
    pub fn raw(self) -> i32 {
        DTYPES.iter().position(|d| *d == self).map_or(0, |i| i as i32 + 1)
    }

    pub fn from_raw(raw: i32) -> Option<DType> {
        if raw >= 1 && raw as usize <= DTYPES.len() {
            Some(DTYPES[raw as usize - 1])
        } else {
            None
        }
    }

    /// Bytes per element, from the library.
    pub fn size(self) -> usize {
        // SAFETY: a plain call with a valid enum value.
        unsafe { sys::tw_dtype_size(self.raw()) }
    }

    /// The library's name: "float32", "bfloat16", …
    pub fn name(self) -> &'static str {
        // SAFETY: static NUL-terminated ASCII.
        unsafe { CStr::from_ptr(sys::tw_dtype_name(self.raw())) }.to_str().unwrap_or("invalid")
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values the library reads and writes as one of its dtypes. Sealed: only the
/// primitive types below, whose layout is the dtype's (bool is not one: any byte could come back).
pub trait Element: Copy + sealed::Sealed + 'static {
    const DTYPE: DType;
}

macro_rules! elements {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: DType = DType::$d; }
    )*};
}
elements!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32,
          u64 => U64, f32 => F32, f64 => F64);

pub(crate) fn element_count(shape: &[i64]) -> Result<usize> {
    shape.iter().try_fold(1usize, |n, &extent| {
        let extent =
            usize::try_from(extent).map_err(|_| Error::invalid(format!("negative extent in shape {:?}", shape)))?;
        n.checked_mul(extent).ok_or_else(|| Error::invalid(format!("shape {:?} overflows", shape)))
    })
}

/// The accessors of the two tensors that own their name, dtype and shape (`View`, `Tensor`).
macro_rules! name_dtype_shape {
    () => {
        pub fn name(&self) -> &str {
            self.name.to_str().unwrap_or("")
        }

        pub fn dtype(&self) -> DType {
            self.dtype
        }

        pub fn shape(&self) -> &[i64] {
            &self.shape
        }
    };
}

/// Fails unless `shape` holds `len` elements; the message names the `what` called `name`.
pub(crate) fn check_holds(what: &str, name: &str, shape: &[i64], len: usize) -> Result<()> {
    if element_count(shape)? != len {
        return Err(Error::invalid(format!("{} '{}': shape {:?} does not hold {} elements", what, name, shape, len)));
    }
    Ok(())
}

/// The C view of a row-major tensor; valid while `name`, `data` and `shape` are.
pub(crate) fn c_view(name: &CStr, dtype: DType, data: *mut c_void, shape: &[i64]) -> sys::tw_tensor {
    sys::tw_tensor {
        dtype: dtype.raw(),
        name: name.as_ptr(),
        data,
        ndim: shape.len() as i32,
        shape: if shape.is_empty() { ptr::null() } else { shape.as_ptr() },
        ..sys::tw_tensor::init()
    }
}

/// A named, borrowed, row-major view of memory the caller owns: a feed, an output to publish, or a
/// tensor to scan. The library never keeps it past the call it is given to.
#[derive(Debug)]
pub struct View<'a> {
    name: CString,
    dtype: DType,
    data: *const c_void,
    shape: Vec<i64>,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> View<'a> {
    /// A view of `data` with `shape` (its element count must equal `data.len()`; `&[]` is a scalar).
    pub fn new<T: Element>(name: &str, data: &'a [T], shape: &[i64]) -> Result<View<'a>> {
        check_holds("view", name, shape, data.len())?;
        Ok(View {
            name: c_string("name", name)?,
            dtype: T::DTYPE,
            data: data.as_ptr() as *const c_void,
            shape: shape.to_vec(),
            _borrow: PhantomData,
        })
    }

    /// A 0-d view of one value.
    pub fn scalar<T: Element>(name: &str, value: &'a T) -> Result<View<'a>> {
        View::new(name, slice::from_ref(value), &[])
    }

    /// A view of raw bytes as `dtype` (for f16, bf16 and fp8, which have no Rust type).
    pub fn from_bytes(name: &str, dtype: DType, data: &'a [u8], shape: &[i64]) -> Result<View<'a>> {
        if element_count(shape)?.checked_mul(dtype.size()) != Some(data.len()) {
            return Err(Error::invalid(format!(
                "view '{}': shape {:?} of {} is not {} bytes",
                name,
                shape,
                dtype.name(),
                data.len()
            )));
        }
        Ok(View {
            name: c_string("name", name)?,
            dtype,
            data: data.as_ptr() as *const c_void,
            shape: shape.to_vec(),
            _borrow: PhantomData,
        })
    }

    name_dtype_shape!();

    /// The C view; valid while `self` is.
    pub(crate) fn raw(&self) -> sys::tw_tensor {
        c_view(&self.name, self.dtype, self.data as *mut c_void, &self.shape)
    }
}

/// A view the library lends: a fetched result, a feed, a variable. Valid for `'a` (the callback or
/// the borrow it came from).
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    raw: sys::tw_tensor,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> TensorRef<'a> {
    /// # Safety
    /// `raw` must be a valid view from the library that stays valid for `'a`.
    pub(crate) unsafe fn from_raw(raw: sys::tw_tensor) -> TensorRef<'a> {
        TensorRef { raw, _borrow: PhantomData }
    }

    pub(crate) fn raw(&self) -> sys::tw_tensor {
        self.raw
    }

    pub fn name(&self) -> &'a str {
        if self.raw.name.is_null() {
            return "";
        }
        // SAFETY: the library's names are NUL-terminated and live as long as the view.
        unsafe { CStr::from_ptr(self.raw.name) }.to_str().unwrap_or("")
    }

    /// `None` for a dtype this crate does not know.
    pub fn dtype(&self) -> Option<DType> {
        DType::from_raw(self.raw.dtype)
    }

    pub fn shape(&self) -> &'a [i64] {
        if self.raw.ndim <= 0 || self.raw.shape.is_null() {
            return &[];
        }
        // SAFETY: ndim entries, valid for 'a.
        unsafe { slice::from_raw_parts(self.raw.shape, self.raw.ndim as usize) }
    }

    pub fn len(&self) -> usize {
        self.shape().iter().map(|&e| e.max(0) as usize).product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_contiguous(&self) -> bool {
        if self.raw.strides.is_null() {
            return true;
        }
        let shape = self.shape();
        // SAFETY: ndim entries, valid for 'a.
        let strides = unsafe { slice::from_raw_parts(self.raw.strides, shape.len()) };
        let mut expected = 1i64;
        for (extent, stride) in shape.iter().zip(strides).rev() {
            if *extent > 1 && *stride != expected {
                return false;
            }
            expected = expected.saturating_mul(*extent);
        }
        true
    }

    fn check_as<T: Element>(&self) -> Result<()> {
        if self.raw.dtype != T::DTYPE.raw() {
            let actual = self.dtype().map_or("invalid", DType::name);
            return Err(Error::invalid(format!("'{}' is {}, not {}", self.name(), actual, T::DTYPE.name())));
        }
        if !self.is_contiguous() {
            return Err(Error::invalid(format!("'{}' is strided", self.name())));
        }
        // Device memory (tw_tensor's device_type other than host: 0, CPU 1, CUDA pinned host 3) is
        // never read from the host.
        if !matches!(self.raw.device_type, 0 | 1 | 3) {
            return Err(Error::invalid(format!(
                "'{}' lives in device memory (device type {}), which the host cannot read",
                self.name(),
                self.raw.device_type
            )));
        }
        if self.len() > 0 && (self.raw.data.is_null() || self.raw.data as usize % mem::align_of::<T>() != 0) {
            return Err(Error::invalid(format!("'{}' is not aligned for {}", self.name(), T::DTYPE.name())));
        }
        Ok(())
    }

    /// The elements, zero copy. Errors: another dtype, a strided or misaligned view.
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        self.check_as::<T>()?;
        if self.len() == 0 {
            return Ok(&[]);
        }
        // SAFETY: dtype, contiguity, alignment and length checked; valid for 'a.
        Ok(unsafe { slice::from_raw_parts(self.raw.data as *const T, self.len()) })
    }

    /// The only element of a one-element view.
    pub fn scalar<T: Element>(&self) -> Result<T> {
        match self.as_slice::<T>()? {
            [value] => Ok(*value),
            _ => Err(Error::invalid(format!("'{}' has {} elements, not 1", self.name(), self.len()))),
        }
    }
}

/// What `scan` finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanResult {
    pub nan_count: i64,
    pub pos_inf_count: i64,
    pub neg_inf_count: i64,
    /// Row-major index of the first NaN or ±Inf.
    pub first_nonfinite_index: Option<i64>,
}

/// Counts the NaN, +Inf and -Inf elements of a view (SIMD, at memory bandwidth).
pub fn scan(view: &View<'_>) -> Result<ScanResult> {
    let mut out = sys::tw_scan_result {
        struct_size: mem::size_of::<sys::tw_scan_result>() as u32,
        nan_count: 0,
        pos_inf_count: 0,
        neg_inf_count: 0,
        first_nonfinite_index: -1,
    };
    let raw = view.raw();
    // SAFETY: both pointers are valid for the call.
    crate::error::check(unsafe { sys::tw_scan(&mut out, &raw) })?;
    Ok(ScanResult {
        nan_count: out.nan_count,
        pos_inf_count: out.pos_inf_count,
        neg_inf_count: out.neg_inf_count,
        first_nonfinite_index: if out.first_nonfinite_index < 0 { None } else { Some(out.first_nonfinite_index) },
    })
}

/// An owned tensor: a copy of a value (`TensorRef::to_owned`, `checkpoint::load_variable`) or data to
/// feed (`Hook::feed_fn`). Its bytes are 8-byte aligned, as every dtype needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    name: CString,
    dtype: DType,
    shape: Vec<i64>,
    words: Vec<u64>,
    len: usize,
}

impl Tensor {
    /// A copy of `data` with `shape` (its element count must equal `data.len()`).
    pub fn new<T: Element>(name: &str, data: &[T], shape: &[i64]) -> Result<Tensor> {
        let bytes = unsafe { slice::from_raw_parts(data.as_ptr() as *const u8, data.len() * mem::size_of::<T>()) };
        Tensor::from_bytes(name, T::DTYPE, bytes, shape)
    }

    /// A 0-d tensor of one value.
    pub fn scalar<T: Element>(name: &str, value: T) -> Result<Tensor> {
        Tensor::new(name, &[value], &[])
    }

    /// A copy of raw bytes as `dtype`.
    pub fn from_bytes(name: &str, dtype: DType, bytes: &[u8], shape: &[i64]) -> Result<Tensor> {
        if element_count(shape)?.checked_mul(dtype.size()) != Some(bytes.len()) {
            return Err(Error::invalid(format!(
                "tensor '{}': shape {:?} of {} is not {} bytes",
                name,
                shape,
                dtype.name(),
                bytes.len()
            )));
        }
        let mut words = vec![0u64; (bytes.len() + 7) / 8];
        // SAFETY: words holds at least bytes.len() bytes.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr() as *mut u8, bytes.len()) };
        Ok(Tensor { name: c_string("name", name)?, dtype, shape: shape.to_vec(), words, len: bytes.len() })
    }

    /// Zeroed memory of `dtype` and `shape`.
    pub(crate) fn zeros(name: &str, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        let bytes = element_count(shape)?
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::invalid(format!("shape {:?} overflows", shape)))?;
        Tensor::from_bytes(name, dtype, &vec![0u8; bytes], shape)
    }

    name_dtype_shape!();

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: words holds len initialised bytes.
        unsafe { slice::from_raw_parts(self.words.as_ptr() as *const u8, self.len) }
    }

    /// A borrowed view to feed, publish or scan.
    pub fn as_view(&self) -> Result<View<'_>> {
        View::from_bytes(self.name(), self.dtype, self.bytes(), &self.shape)
    }

    /// The tensor as the library lends values.
    pub fn view(&self) -> TensorRef<'_> {
        // SAFETY: the view points into self, valid for the borrow.
        unsafe { TensorRef::from_raw(self.raw()) }
    }

    /// The elements. Errors: another dtype.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.view().as_slice::<T>()
    }

    /// The only element of a one-element tensor.
    pub fn scalar_value<T: Element>(&self) -> Result<T> {
        self.view().scalar::<T>()
    }

    /// The C view; valid while `self` is (and not moved).
    pub(crate) fn raw(&self) -> sys::tw_tensor {
        c_view(&self.name, self.dtype, self.words.as_ptr() as *mut c_void, &self.shape)
    }
}

impl TensorRef<'_> {
    /// A copy (contiguous views only).
    pub fn to_owned(&self) -> Result<Tensor> {
        if !self.is_contiguous() {
            return Err(Error::invalid(format!("'{}' is strided", self.name())));
        }
        let dtype = self.dtype().ok_or_else(|| Error::invalid(format!("'{}' has no valid dtype", self.name())))?;
        let bytes = self.len() * dtype.size();
        let data = if bytes == 0 {
            &[][..]
        } else {
            // SAFETY: a contiguous view of len elements of dtype.
            unsafe { slice::from_raw_parts(self.raw.data as *const u8, bytes) }
        };
        Tensor::from_bytes(self.name(), dtype, data, self.shape())
    }
}

/// What `stats` finds: counts of every kind of element and, over the finite ones, min/max/mean (NaN
/// when there is none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub element_count: i64,
    pub finite_count: i64,
    pub nan_count: i64,
    pub pos_inf_count: i64,
    pub neg_inf_count: i64,
    pub first_nonfinite_index: Option<i64>,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

/// Whether a view holds a NaN or ±Inf (stops at the first).
pub fn has_nonfinite(view: &View<'_>) -> Result<bool> {
    let mut out = 0;
    let raw = view.raw();
    // SAFETY: both pointers are valid for the call.
    crate::error::check(unsafe { sys::tw_has_nonfinite(&mut out, &raw) })?;
    Ok(out != 0)
}

/// Counts and finite min/max/mean of a view, in one pass.
pub fn stats(view: &View<'_>) -> Result<Stats> {
    let mut out = sys::tw_numerics_stats {
        struct_size: mem::size_of::<sys::tw_numerics_stats>() as u32,
        element_count: 0,
        finite_count: 0,
        nan_count: 0,
        pos_inf_count: 0,
        neg_inf_count: 0,
        first_nonfinite_index: -1,
        min: 0.0,
        max: 0.0,
        mean: 0.0,
    };
    let raw = view.raw();
    // SAFETY: both pointers are valid for the call.
    crate::error::check(unsafe { sys::tw_tensor_stats(&mut out, &raw) })?;
    Ok(Stats {
        element_count: out.element_count,
        finite_count: out.finite_count,
        nan_count: out.nan_count,
        pos_inf_count: out.pos_inf_count,
        neg_inf_count: out.neg_inf_count,
        first_nonfinite_index: if out.first_nonfinite_index < 0 { None } else { Some(out.first_nonfinite_index) },
        min: out.min,
        max: out.max,
        mean: out.mean,
    })
}

/// TF's `tf.debugging.check_numerics`: `Err(InvalidArgument)` whose message starts with `message`
/// when the view holds a NaN or ±Inf.
pub fn check_numerics(view: &View<'_>, message: &str) -> Result<()> {
    let message = c_string("message", message)?;
    let raw = view.raw();
    // SAFETY: valid pointers for the call.
    crate::error::check(unsafe { sys::tw_check_numerics(&raw, message.as_ptr()) })
}

/// The SIMD target the numerics kernels run on here ("AVX2", "SSE4", …).
pub fn numerics_target() -> &'static str {
    // SAFETY: a static string.
    unsafe { std::ffi::CStr::from_ptr(sys::tw_numerics_target()) }.to_str().unwrap_or("")
}

/// `tw_tensor_element_count` of a view: the product of its shape (the library's arithmetic).
pub fn element_count_of(view: &View<'_>) -> i64 {
    let raw = view.raw();
    // SAFETY: a valid view for the call.
    unsafe { sys::tw_tensor_element_count(&raw) }
}
