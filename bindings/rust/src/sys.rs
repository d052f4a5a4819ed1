//! Raw declarations of the C API (`include/trainwatch/*.h`), written by hand: the subset this crate
//! wraps. Layouts and values must match the header exactly: `tests/session.rs` checks status codes,
//! dtypes and the version against the library, and `session.rs` asserts the size of `tw_tensor`.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uint, c_void};

pub type tw_status = i32;

pub const TW_OK: tw_status = 0;
pub const TW_INVALID_ARGUMENT: tw_status = 3;
pub const TW_NOT_FOUND: tw_status = 5;
pub const TW_INTERNAL: tw_status = 13;
pub const TW_OUT_OF_RANGE: tw_status = 11;
pub const TW_STOP_ITERATION: tw_status = 102;
pub const TW_CALLBACK_FAILED: tw_status = 103;

/// `TW_VERSION_NUMBER` of the header these declarations follow.
pub const TW_VERSION_NUMBER: u32 = 100;
/// `TW_UNSET`: "None" for int64 arguments.
pub const TW_UNSET: i64 = i64::MIN;

// tw_option, tw_dtype and tw_log_level are C enums kept 32 bits wide by the header.
pub type tw_option = i32;
pub type tw_log_level = i32;

#[repr(C)]
pub struct tw_options {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tw_session {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tw_hook {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tw_run_context {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tw_step_context {
    _private: [u8; 0],
}
#[repr(C)]
pub struct tw_checkpoint_listener {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_tensor {
    pub struct_size: u32,
    pub dtype: i32,
    pub name: *const c_char,
    pub data: *mut c_void,
    pub ndim: i32,
    pub shape: *const i64,
    pub strides: *const i64,
}

impl tw_tensor {
    /// `TW_TENSOR_INIT`.
    pub fn init() -> Self {
        tw_tensor {
            struct_size: std::mem::size_of::<tw_tensor>() as u32,
            dtype: 0,
            name: std::ptr::null(),
            data: std::ptr::null_mut(),
            ndim: 0,
            shape: std::ptr::null(),
            strides: std::ptr::null(),
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_scan_result {
    pub struct_size: u32,
    pub nan_count: i64,
    pub pos_inf_count: i64,
    pub neg_inf_count: i64,
    pub first_nonfinite_index: i64,
}

pub type tw_step_fn = unsafe extern "C" fn(user_data: *mut c_void, ctx: *mut tw_step_context) -> tw_status;

#[repr(C)]
pub struct tw_hook_callbacks {
    pub struct_size: u32,
    pub begin: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session) -> tw_status>,
    pub after_create_session: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session) -> tw_status>,
    pub before_run: Option<unsafe extern "C" fn(*mut c_void, *mut tw_run_context) -> tw_status>,
    pub after_run: Option<unsafe extern "C" fn(*mut c_void, *mut tw_run_context) -> tw_status>,
    pub end: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session) -> tw_status>,
    pub on_error: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session, tw_status)>,
    pub destroy: Option<unsafe extern "C" fn(*mut c_void)>,
}

// Every function returning tw_status is #[must_use], as TW_NODISCARD marks it in the header.
extern "C" {
    // common.h
    pub fn tw_version_number() -> c_uint;
    pub fn tw_version_string() -> *const c_char;
    pub fn tw_status_name(status: tw_status) -> *const c_char;
    pub fn tw_last_error_message() -> *const c_char;
    #[must_use]
    pub fn tw_set_error(status: tw_status, message: *const c_char) -> tw_status;
    pub fn tw_dtype_size(dtype: i32) -> usize;
    pub fn tw_dtype_name(dtype: i32) -> *const c_char;
    pub fn tw_set_log_level(level: tw_log_level);

    // session.h: options
    #[must_use]
    pub fn tw_options_create(out: *mut *mut tw_options) -> tw_status;
    pub fn tw_options_destroy(opts: *mut tw_options);
    #[must_use]
    pub fn tw_options_set_int64(opts: *mut tw_options, key: tw_option, value: i64) -> tw_status;
    #[must_use]
    pub fn tw_options_set_double(opts: *mut tw_options, key: tw_option, value: f64) -> tw_status;
    #[must_use]
    pub fn tw_options_set_string(opts: *mut tw_options, key: tw_option, value: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_options_set_none(opts: *mut tw_options, key: tw_option) -> tw_status;
    #[must_use]
    pub fn tw_options_get_int64(out: *mut i64, opts: *const tw_options, key: tw_option) -> tw_status;
    #[must_use]
    pub fn tw_options_get_double(out: *mut f64, opts: *const tw_options, key: tw_option) -> tw_status;
    #[must_use]
    pub fn tw_options_get_string(out: *mut *const c_char, opts: *const tw_options, key: tw_option) -> tw_status;
    #[must_use]
    pub fn tw_options_add_variable(opts: *mut tw_options, var: *const tw_tensor) -> tw_status;

    // session.h: hooks
    #[must_use]
    pub fn tw_hook_create(
        out: *mut *mut tw_hook,
        name: *const c_char,
        callbacks: *const tw_hook_callbacks,
        user_data: *mut c_void,
    ) -> tw_status;
    pub fn tw_hook_destroy(hook: *mut tw_hook);
    pub fn tw_hook_name(hook: *const tw_hook) -> *const c_char;
    #[must_use]
    pub fn tw_hook_wrap(
        out: *mut *mut tw_hook,
        name: *const c_char,
        inner: *mut tw_hook,
        callbacks: *const tw_hook_callbacks,
        user_data: *mut c_void,
    ) -> tw_status;
    #[must_use]
    pub fn tw_hook_call_begin(inner: *mut tw_hook, session: *mut tw_session) -> tw_status;
    #[must_use]
    pub fn tw_hook_call_after_create_session(inner: *mut tw_hook, session: *mut tw_session) -> tw_status;
    #[must_use]
    pub fn tw_hook_call_before_run(inner: *mut tw_hook, ctx: *mut tw_run_context) -> tw_status;
    #[must_use]
    pub fn tw_hook_call_after_run(inner: *mut tw_hook, ctx: *mut tw_run_context) -> tw_status;
    #[must_use]
    pub fn tw_hook_call_end(inner: *mut tw_hook, session: *mut tw_session) -> tw_status;
    pub fn tw_hook_call_on_error(inner: *mut tw_hook, session: *mut tw_session, error: tw_status);

    // session.h: sessions
    #[must_use]
    pub fn tw_monitored_session_create(
        out: *mut *mut tw_session,
        opts: *const tw_options,
        hooks: *const *mut tw_hook,
        n_hooks: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_monitored_training_session_create(
        out: *mut *mut tw_session,
        opts: *const tw_options,
        hooks: *const *mut tw_hook,
        n_hooks: usize,
        chief_only_hooks: *const *mut tw_hook,
        n_chief_only_hooks: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_singular_monitored_session_create(
        out: *mut *mut tw_session,
        opts: *const tw_options,
        hooks: *const *mut tw_hook,
        n_hooks: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_session_run(
        session: *mut tw_session,
        feeds: *const tw_tensor,
        n_feeds: usize,
        step: Option<tw_step_fn>,
        user_data: *mut c_void,
    ) -> tw_status;
    #[must_use]
    pub fn tw_session_run_without_hooks(
        session: *mut tw_session,
        feeds: *const tw_tensor,
        n_feeds: usize,
        step: Option<tw_step_fn>,
        user_data: *mut c_void,
    ) -> tw_status;
    pub fn tw_session_should_stop(session: *const tw_session) -> c_int;
    #[must_use]
    pub fn tw_session_request_stop(session: *mut tw_session) -> tw_status;
    #[must_use]
    pub fn tw_session_close(session: *mut tw_session) -> tw_status;
    #[must_use]
    pub fn tw_session_destroy(session: *mut tw_session) -> tw_status;
    #[must_use]
    pub fn tw_session_global_step(session: *const tw_session) -> i64;
    #[must_use]
    pub fn tw_session_set_global_step(session: *mut tw_session, value: i64) -> tw_status;
    #[must_use]
    pub fn tw_session_get_variable(out: *mut tw_tensor, session: *const tw_session, name: *const c_char) -> tw_status;
    pub fn tw_session_is_chief(session: *const tw_session) -> c_int;
    #[must_use]
    pub fn tw_session_get_output(out: *mut tw_tensor, session: *const tw_session, name: *const c_char) -> tw_status;

    // session.h: run context
    #[must_use]
    pub fn tw_run_context_request_fetch(ctx: *mut tw_run_context, name: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_run_context_request_stop(ctx: *mut tw_run_context) -> tw_status;
    pub fn tw_run_context_stop_requested(ctx: *const tw_run_context) -> c_int;
    pub fn tw_run_context_session(ctx: *mut tw_run_context) -> *mut tw_session;
    #[must_use]
    pub fn tw_run_context_get_result(out: *mut tw_tensor, ctx: *const tw_run_context, name: *const c_char)
        -> tw_status;
    pub fn tw_run_context_result_count(ctx: *const tw_run_context) -> usize;
    #[must_use]
    pub fn tw_run_context_result_at(out: *mut tw_tensor, ctx: *const tw_run_context, index: usize) -> tw_status;
    pub fn tw_run_context_request_count(ctx: *const tw_run_context) -> usize;
    #[must_use]
    pub fn tw_run_context_request_at(out: *mut *const c_char, ctx: *const tw_run_context, index: usize) -> tw_status;

    // session.h: step context
    pub fn tw_step_context_feed_count(ctx: *const tw_step_context) -> usize;
    #[must_use]
    pub fn tw_step_context_feed_at(out: *mut tw_tensor, ctx: *const tw_step_context, index: usize) -> tw_status;
    #[must_use]
    pub fn tw_step_context_get_feed(out: *mut tw_tensor, ctx: *const tw_step_context, name: *const c_char)
        -> tw_status;
    pub fn tw_step_context_is_requested(ctx: *const tw_step_context, name: *const c_char) -> c_int;
    pub fn tw_step_context_requested_count(ctx: *const tw_step_context) -> usize;
    #[must_use]
    pub fn tw_step_context_requested_at(
        out: *mut *const c_char,
        ctx: *const tw_step_context,
        index: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_step_context_publish_copy(ctx: *mut tw_step_context, output: *const tw_tensor) -> tw_status;
    pub fn tw_step_context_global_step(ctx: *const tw_step_context) -> i64;
    #[must_use]
    pub fn tw_step_context_set_global_step(ctx: *mut tw_step_context, value: i64) -> tw_status;
    #[must_use]
    pub fn tw_step_context_request_stop(ctx: *mut tw_step_context) -> tw_status;
    pub fn tw_step_context_session(ctx: *mut tw_step_context) -> *mut tw_session;

    // hooks.h
    #[must_use]
    pub fn tw_stop_at_step_hook_create(out: *mut *mut tw_hook, num_steps: i64, last_step: i64) -> tw_status;
    #[must_use]
    pub fn tw_nan_tensor_hook_create(
        out: *mut *mut tw_hook,
        loss_name: *const c_char,
        fail_on_nan_loss: c_int,
    ) -> tw_status;
    #[must_use]
    pub fn tw_checkpoint_saver_hook_create(
        out: *mut *mut tw_hook,
        checkpoint_dir: *const c_char,
        opts: *const tw_options,
        listeners: *const *mut tw_checkpoint_listener,
        n_listeners: usize,
    ) -> tw_status;

    // numerics.h
    #[must_use]
    pub fn tw_scan(out: *mut tw_scan_result, tensor: *const tw_tensor) -> tw_status;

    // checkpoint.h
    #[must_use]
    pub fn tw_latest_checkpoint(out_path: *mut c_char, out_size: usize, dir: *const c_char) -> tw_status;
}
