//! Raw declarations of trainwatch's C API (`include/trainwatch/*.h`), written by hand (no bindgen):
//! every function `libtrainwatch` exports, the experimental collective seam and hook extension points
//! included (`TW_EXPERIMENTAL_API` in C: no ABI promise). `libtrainwatch_mpi`'s
//! `tw_mpi_collective_create` is a separate library and is not declared here.
//!
//! Layouts and values must match the header exactly: the `trainwatch` crate's tests check status
//! codes, dtypes and the version against the library, and its `session.rs` asserts the size of
//! `tw_tensor`. The build script links `libtrainwatch` (found by `pkg-config trainwatch`, else in
//! `TRAINWATCH_LIB_DIR`) and tells dependents where it found it (`DEP_TRAINWATCH_LIBDIR`).
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uint, c_void};

pub type tw_status = i32;

pub const TW_OK: tw_status = 0;
pub const TW_CANCELLED: tw_status = 1;
pub const TW_UNKNOWN: tw_status = 2;
pub const TW_INVALID_ARGUMENT: tw_status = 3;
pub const TW_DEADLINE_EXCEEDED: tw_status = 4;
pub const TW_NOT_FOUND: tw_status = 5;
pub const TW_ALREADY_EXISTS: tw_status = 6;
pub const TW_PERMISSION_DENIED: tw_status = 7;
pub const TW_RESOURCE_EXHAUSTED: tw_status = 8;
pub const TW_FAILED_PRECONDITION: tw_status = 9;
pub const TW_ABORTED: tw_status = 10;
pub const TW_OUT_OF_RANGE: tw_status = 11;
pub const TW_UNIMPLEMENTED: tw_status = 12;
pub const TW_INTERNAL: tw_status = 13;
pub const TW_UNAVAILABLE: tw_status = 14;
pub const TW_DATA_LOSS: tw_status = 15;
pub const TW_UNAUTHENTICATED: tw_status = 16;
pub const TW_NAN_LOSS: tw_status = 100;
pub const TW_IO: tw_status = 101;
pub const TW_STOP_ITERATION: tw_status = 102;
pub const TW_CALLBACK_FAILED: tw_status = 103;

/// `TW_VERSION_NUMBER` of the header these declarations follow.
pub const TW_VERSION_NUMBER: u32 = 100;
/// `TW_UNSET`: "None" for int64 arguments.
pub const TW_UNSET: i64 = i64::MIN;
/// `TW_UNSET_SECS`: "None" for seconds (any negative value).
pub const TW_UNSET_SECS: f64 = -1.0;

// tw_option_state, tw_option_type, tw_nan_action, tw_session_log_status, tw_reduce_op, tw_progress_kind.
pub const TW_OPTION_DEFAULT: i32 = 0;
pub const TW_OPTION_NONE: i32 = 1;
pub const TW_OPTION_SET: i32 = 2;
pub const TW_OPTION_TYPE_INT64: i32 = 1;
pub const TW_OPTION_TYPE_DOUBLE: i32 = 2;
pub const TW_OPTION_TYPE_STRING: i32 = 3;
pub const TW_NAN_ACTION_FAIL: i64 = 0;
pub const TW_NAN_ACTION_STOP: i64 = 1;
pub const TW_NAN_ACTION_CALLBACK: i64 = 2;
pub const TW_NAN_ACTION_ROLLBACK: i64 = 3;
pub const TW_SESSION_LOG_STATUS_UNSPECIFIED: i32 = 0;
pub const TW_SESSION_LOG_START: i32 = 1;
pub const TW_SESSION_LOG_STOP: i32 = 2;
pub const TW_SESSION_LOG_CHECKPOINT: i32 = 3;
pub const TW_SUMMARY_VALUE_OTHER: i32 = 0;
pub const TW_SUMMARY_VALUE_SCALAR: i32 = 1;
pub const TW_SUMMARY_VALUE_HISTOGRAM: i32 = 2;
pub const TW_EVENT_NONE: i32 = 0;
pub const TW_EVENT_FILE_VERSION: i32 = 1;
pub const TW_EVENT_SUMMARY: i32 = 2;
pub const TW_EVENT_LOG_MESSAGE: i32 = 3;
pub const TW_EVENT_SESSION_LOG: i32 = 4;
pub const TW_EVENT_OTHER: i32 = 5;
pub const TW_REDUCE_SUM: i32 = 1;
pub const TW_REDUCE_MIN: i32 = 2;
pub const TW_REDUCE_MAX: i32 = 3;
pub const TW_PROGRESS_SAVE: i32 = 1;
pub const TW_PROGRESS_RESTORE: i32 = 2;

// tw_option, tw_dtype and tw_log_level are C enums kept 32 bits wide by the header.
pub type tw_option = i32;
pub type tw_log_level = i32;

/// Declares the C API's opaque types: known only by pointer, never made or read on the Rust side.
macro_rules! opaque {
    ($($name:ident),+ $(,)?) => {
        $(
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )+
    };
}
opaque!(
    tw_options,
    tw_session,
    tw_hook,
    tw_run_context,
    tw_step_context,
    tw_checkpoint_listener,
    tw_saver,
    tw_checkpoint_variables,
    tw_summary_writer,
    tw_event_reader,
);

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
    /// Second version: where `data` lives (`tw_device_type`; 0 is host memory) and which device.
    pub device_type: i32,
    pub device_id: i32,
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
            device_type: 0,
            device_id: 0,
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

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_numerics_stats {
    pub struct_size: u32,
    pub element_count: i64,
    pub finite_count: i64,
    pub nan_count: i64,
    pub pos_inf_count: i64,
    pub neg_inf_count: i64,
    pub first_nonfinite_index: i64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_option_info {
    pub struct_size: u32,
    pub key: i32,
    pub name: *const c_char,
    pub type_: i32,
    pub read_by: u32,
    pub int64_default: i64,
    pub int64_min: i64,
    pub int64_max: i64,
    pub double_default: f64,
    pub double_min: f64,
    pub double_min_exclusive: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_nan_event {
    pub struct_size: u32,
    pub tensor_name: *const c_char,
    pub global_step: i64,
    pub nan_count: i64,
    pub pos_inf_count: i64,
    pub neg_inf_count: i64,
    pub first_nonfinite_index: i64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_histogram {
    pub struct_size: u32,
    pub min: f64,
    pub max: f64,
    pub num: f64,
    pub sum: f64,
    pub sum_squares: f64,
    pub bucket_count: usize,
    pub bucket_limit: *const f64,
    pub bucket: *const f64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_summary_value {
    pub struct_size: u32,
    pub kind: i32,
    pub tag: *const c_char,
    pub simple_value: f32,
    pub histogram: *const tw_histogram,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tw_event {
    pub struct_size: u32,
    pub kind: i32,
    pub wall_time: f64,
    pub step: i64,
    pub file_version: *const c_char,
    pub value_count: usize,
    pub values: *const *const tw_summary_value,
    pub session_log_status: i32,
    pub checkpoint_path: *const c_char,
    pub message: *const c_char,
    pub log_level: i32,
}

impl tw_event {
    /// `TW_EVENT_INIT`.
    pub fn init() -> Self {
        tw_event {
            struct_size: std::mem::size_of::<tw_event>() as u32,
            kind: 0,
            wall_time: 0.0,
            step: 0,
            file_version: std::ptr::null(),
            value_count: 0,
            values: std::ptr::null(),
            session_log_status: 0,
            checkpoint_path: std::ptr::null(),
            message: std::ptr::null(),
            log_level: 0,
        }
    }
}

/// The experimental collective seam (`TW_EXPERIMENTAL_API`): the job's engine as a callback table.
#[repr(C)]
pub struct tw_collective {
    pub struct_size: u32,
    pub rank: i32,
    pub world_size: i32,
    pub allreduce_int64: Option<
        unsafe extern "C" fn(*mut c_void, values: *mut i64, count: usize, op: i32, timeout_secs: f64) -> tw_status,
    >,
    pub broadcast: Option<
        unsafe extern "C" fn(*mut c_void, data: *mut c_void, size: usize, root: i32, timeout_secs: f64) -> tw_status,
    >,
    pub barrier: Option<unsafe extern "C" fn(*mut c_void, timeout_secs: f64) -> tw_status>,
    pub destroy: Option<unsafe extern "C" fn(*mut c_void)>,
}

#[repr(C)]
pub struct tw_checkpoint_listener_callbacks {
    pub struct_size: u32,
    pub begin: Option<unsafe extern "C" fn(*mut c_void) -> tw_status>,
    pub before_save: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session, i64) -> tw_status>,
    pub after_save: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session, i64, *mut c_int) -> tw_status>,
    pub end: Option<unsafe extern "C" fn(*mut c_void, *mut tw_session, i64) -> tw_status>,
    pub destroy: Option<unsafe extern "C" fn(*mut c_void)>,
}

pub type tw_destroy_fn = unsafe extern "C" fn(user_data: *mut c_void);
pub type tw_step_fn = unsafe extern "C" fn(user_data: *mut c_void, ctx: *mut tw_step_context) -> tw_status;
pub type tw_init_fn = unsafe extern "C" fn(user_data: *mut c_void, session: *mut tw_session) -> tw_status;
pub type tw_ready_fn =
    unsafe extern "C" fn(user_data: *mut c_void, session: *mut tw_session, ready: *mut c_int) -> tw_status;
pub type tw_log_fn = unsafe extern "C" fn(user_data: *mut c_void, level: tw_log_level, message: *const c_char);
pub type tw_progress_fn = unsafe extern "C" fn(
    user_data: *mut c_void,
    kind: i32,
    path: *const c_char,
    bytes_done: i64,
    bytes_total: i64,
    elapsed_secs: f64,
    finished: c_int,
);
pub type tw_nan_fn =
    unsafe extern "C" fn(user_data: *mut c_void, session: *mut tw_session, event: *const tw_nan_event) -> tw_status;
pub type tw_log_formatter_fn = unsafe extern "C" fn(
    user_data: *mut c_void,
    values: *const *const tw_tensor,
    n_values: usize,
    buffer: *mut c_char,
    buffer_size: usize,
    length: *mut usize,
) -> tw_status;
pub type tw_feed_fn =
    unsafe extern "C" fn(user_data: *mut c_void, feeds: *mut *const tw_tensor, n_feeds: *mut usize) -> tw_status;
pub type tw_global_step_fn =
    unsafe extern "C" fn(user_data: *mut c_void, session: *mut tw_session, global_step: *mut i64) -> tw_status;
pub type tw_checkpoint_save_fn = unsafe extern "C" fn(
    user_data: *mut c_void,
    hook: *mut tw_hook,
    session: *mut tw_session,
    step: i64,
    stop: *mut c_int,
) -> tw_status;
pub type tw_log_tensors_fn = unsafe extern "C" fn(
    user_data: *mut c_void,
    hook: *mut tw_hook,
    values: *const *const tw_tensor,
    n_values: usize,
) -> tw_status;
pub type tw_step_rate_fn = unsafe extern "C" fn(
    user_data: *mut c_void,
    hook: *mut tw_hook,
    elapsed_steps: i64,
    elapsed_time: f64,
    global_step: i64,
) -> tw_status;

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
    pub fn tw_set_log_sink(fn_: Option<tw_log_fn>, user_data: *mut c_void);
    pub fn tw_tensor_element_count(t: *const tw_tensor) -> i64;

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
    #[must_use]
    pub fn tw_options_get_state(out: *mut i32, opts: *const tw_options, key: tw_option) -> tw_status;
    #[must_use]
    pub fn tw_option_info_by_key(out: *mut tw_option_info, key: tw_option) -> tw_status;
    #[must_use]
    pub fn tw_option_info_by_name(out: *mut tw_option_info, name: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_options_set_recoverable(opts: *mut tw_options, status: tw_status, recoverable: c_int) -> tw_status;
    #[must_use]
    pub fn tw_options_record_error(opts: *mut tw_options, code: tw_status, message: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_options_set_init_fn(
        opts: *mut tw_options,
        fn_: Option<tw_init_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_options_set_ready_fn(
        opts: *mut tw_options,
        fn_: Option<tw_ready_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;

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
    pub fn tw_session_save_checkpoint(
        out_path: *mut *const c_char,
        session: *mut tw_session,
        prefix: *const c_char,
        global_step: i64,
    ) -> tw_status;
    #[must_use]
    pub fn tw_session_get_variable(out: *mut tw_tensor, session: *const tw_session, name: *const c_char) -> tw_status;
    pub fn tw_session_is_chief(session: *const tw_session) -> c_int;
    #[must_use]
    pub fn tw_session_get_output(out: *mut tw_tensor, session: *const tw_session, name: *const c_char) -> tw_status;
    pub fn tw_session_variable_count(session: *const tw_session) -> usize;
    #[must_use]
    pub fn tw_session_variable_at(out: *mut tw_tensor, session: *const tw_session, index: usize) -> tw_status;
    pub fn tw_session_hook_count(session: *const tw_session) -> usize;
    #[must_use]
    pub fn tw_session_hook_at(out: *mut *mut tw_hook, session: *const tw_session, index: usize) -> tw_status;
    pub fn tw_session_creation_count(session: *const tw_session) -> i64;
    #[must_use]
    pub fn tw_session_notify_preemption(session: *mut tw_session) -> tw_status;
    pub fn tw_session_preempted(session: *const tw_session) -> c_int;

    // session.h: run context
    #[must_use]
    pub fn tw_run_context_request_fetch(ctx: *mut tw_run_context, name: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_run_context_request_stop(ctx: *mut tw_run_context) -> tw_status;
    #[must_use]
    pub fn tw_run_context_add_feed(ctx: *mut tw_run_context, feed: *const tw_tensor) -> tw_status;
    pub fn tw_run_context_original_feed_count(ctx: *const tw_run_context) -> usize;
    #[must_use]
    pub fn tw_run_context_original_feed(out: *mut tw_tensor, ctx: *const tw_run_context, index: usize) -> tw_status;
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
    pub fn tw_step_context_publish(ctx: *mut tw_step_context, output: *const tw_tensor) -> tw_status;
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

    #[must_use]
    pub fn tw_checkpoint_listener_create(
        out: *mut *mut tw_checkpoint_listener,
        name: *const c_char,
        callbacks: *const tw_checkpoint_listener_callbacks,
        user_data: *mut c_void,
    ) -> tw_status;
    pub fn tw_checkpoint_listener_destroy(listener: *mut tw_checkpoint_listener);
    #[must_use]
    pub fn tw_nan_tensor_hook_create_with_options(
        out: *mut *mut tw_hook,
        watch: *const *const c_char,
        n_watch: usize,
        opts: *const tw_options,
        fn_: Option<tw_nan_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_logging_tensor_hook_create(
        out: *mut *mut tw_hook,
        names: *const *const c_char,
        tags: *const *const c_char,
        n_names: usize,
        opts: *const tw_options,
        formatter: Option<tw_log_formatter_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_step_counter_hook_create(
        out: *mut *mut tw_hook,
        opts: *const tw_options,
        writer: *mut tw_summary_writer,
    ) -> tw_status;
    #[must_use]
    pub fn tw_summary_saver_hook_create(
        out: *mut *mut tw_hook,
        summarize: *const *const c_char,
        n_summarize: usize,
        opts: *const tw_options,
        writer: *mut tw_summary_writer,
    ) -> tw_status;
    #[must_use]
    pub fn tw_feed_fn_hook_create(
        out: *mut *mut tw_hook,
        fn_: Option<tw_feed_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_final_ops_hook_create(
        out: *mut *mut tw_hook,
        feeds: *const tw_tensor,
        n_feeds: usize,
        final_step: Option<tw_step_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    pub fn tw_final_ops_hook_value_count(hook: *const tw_hook) -> usize;
    #[must_use]
    pub fn tw_final_ops_hook_value_at(out: *mut tw_tensor, hook: *const tw_hook, index: usize) -> tw_status;
    #[must_use]
    pub fn tw_final_ops_hook_get_value(out: *mut tw_tensor, hook: *const tw_hook, name: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_global_step_waiter_hook_create(
        out: *mut *mut tw_hook,
        wait_until_step: i64,
        opts: *const tw_options,
        fn_: Option<tw_global_step_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_profiler_hook_create(out: *mut *mut tw_hook, opts: *const tw_options) -> tw_status;

    // hooks.h, experimental: the built-in hooks' extension points
    #[must_use]
    pub fn tw_checkpoint_saver_hook_set_save_fn(
        hook: *mut tw_hook,
        fn_: Option<tw_checkpoint_save_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_checkpoint_saver_hook_save(
        out_stop: *mut c_int,
        hook: *mut tw_hook,
        session: *mut tw_session,
        step: i64,
    ) -> tw_status;
    #[must_use]
    pub fn tw_logging_tensor_hook_set_log_fn(
        hook: *mut tw_hook,
        fn_: Option<tw_log_tensors_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_logging_tensor_hook_log_tensors(
        hook: *mut tw_hook,
        values: *const *const tw_tensor,
        n_values: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_step_counter_hook_set_record_fn(
        hook: *mut tw_hook,
        fn_: Option<tw_step_rate_fn>,
        user_data: *mut c_void,
        destroy: Option<tw_destroy_fn>,
    ) -> tw_status;
    #[must_use]
    pub fn tw_step_counter_hook_log_and_record(
        hook: *mut tw_hook,
        elapsed_steps: i64,
        elapsed_time: f64,
        global_step: i64,
    ) -> tw_status;

    // numerics.h
    #[must_use]
    pub fn tw_scan(out: *mut tw_scan_result, tensor: *const tw_tensor) -> tw_status;
    #[must_use]
    pub fn tw_has_nonfinite(out: *mut c_int, tensor: *const tw_tensor) -> tw_status;
    #[must_use]
    pub fn tw_tensor_stats(out: *mut tw_numerics_stats, tensor: *const tw_tensor) -> tw_status;
    #[must_use]
    pub fn tw_check_numerics(tensor: *const tw_tensor, message: *const c_char) -> tw_status;
    pub fn tw_numerics_target() -> *const c_char;

    // checkpoint.h
    #[must_use]
    pub fn tw_latest_checkpoint(out_path: *mut c_char, out_size: usize, dir: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_saver_create(out: *mut *mut tw_saver, variables: *const tw_tensor, n_variables: usize) -> tw_status;
    pub fn tw_saver_destroy(saver: *mut tw_saver);
    #[must_use]
    pub fn tw_saver_set_max_to_keep(saver: *mut tw_saver, max_to_keep: i64) -> tw_status;
    #[must_use]
    pub fn tw_saver_set_keep_checkpoint_every_n_hours(saver: *mut tw_saver, hours: f64) -> tw_status;
    #[must_use]
    pub fn tw_saver_set_pad_step_number(saver: *mut tw_saver, pad: c_int) -> tw_status;
    #[must_use]
    pub fn tw_saver_set_recycle_files(saver: *mut tw_saver, recycle: c_int) -> tw_status;
    #[must_use]
    pub fn tw_saver_save(
        out_path: *mut *const c_char,
        saver: *mut tw_saver,
        prefix: *const c_char,
        global_step: i64,
    ) -> tw_status;
    #[must_use]
    pub fn tw_saver_restore(saver: *mut tw_saver, path: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_saver_restore_variables(
        saver: *mut tw_saver,
        path: *const c_char,
        names: *const *const c_char,
        n_names: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_saver_restore_newest_good(
        out_path: *mut *const c_char,
        saver: *mut tw_saver,
        dir: *const c_char,
    ) -> tw_status;
    #[must_use]
    pub fn tw_saver_recover_last_checkpoints(saver: *mut tw_saver, dir: *const c_char) -> tw_status;
    pub fn tw_saver_last_checkpoint_count(saver: *const tw_saver) -> usize;
    #[must_use]
    pub fn tw_saver_last_checkpoint_at(out_path: *mut *const c_char, saver: *const tw_saver, index: usize)
        -> tw_status;
    #[must_use]
    pub fn tw_checkpoint_list_variables(out: *mut *mut tw_checkpoint_variables, path: *const c_char) -> tw_status;
    pub fn tw_checkpoint_variables_count(list: *const tw_checkpoint_variables) -> usize;
    #[must_use]
    pub fn tw_checkpoint_variables_at(
        out: *mut tw_tensor,
        list: *const tw_checkpoint_variables,
        index: usize,
    ) -> tw_status;
    pub fn tw_checkpoint_variables_destroy(list: *mut tw_checkpoint_variables);
    #[must_use]
    pub fn tw_checkpoint_load_variable(path: *const c_char, destination: *const tw_tensor) -> tw_status;
    #[must_use]
    pub fn tw_checkpoint_verify(path: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_set_progress_sink(every_n_secs: f64, fn_: Option<tw_progress_fn>, user_data: *mut c_void) -> tw_status;
    #[must_use]
    pub fn tw_checkpoint_upgrade(from: *const c_char, to: *const c_char) -> tw_status;

    // summary.h
    #[must_use]
    pub fn tw_summary_writer_open(out: *mut *mut tw_summary_writer, logdir: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_summary_writer_add_scalar(
        writer: *mut tw_summary_writer,
        tag: *const c_char,
        step: i64,
        value: f64,
    ) -> tw_status;
    #[must_use]
    pub fn tw_summary_writer_add_histogram(
        writer: *mut tw_summary_writer,
        tag: *const c_char,
        step: i64,
        values: *const tw_tensor,
    ) -> tw_status;
    #[must_use]
    pub fn tw_summary_writer_add_session_log(
        writer: *mut tw_summary_writer,
        step: i64,
        status: i32,
        checkpoint_path: *const c_char,
        msg: *const c_char,
    ) -> tw_status;
    #[must_use]
    pub fn tw_summary_writer_add_summary(
        writer: *mut tw_summary_writer,
        step: i64,
        summary: *const c_void,
        size: usize,
    ) -> tw_status;
    #[must_use]
    pub fn tw_summary_writer_flush(writer: *mut tw_summary_writer) -> tw_status;
    pub fn tw_summary_writer_path(writer: *const tw_summary_writer) -> *const c_char;
    #[must_use]
    pub fn tw_summary_writer_close(writer: *mut tw_summary_writer) -> tw_status;
    pub fn tw_summary_writer_destroy(writer: *mut tw_summary_writer);
    #[must_use]
    pub fn tw_event_reader_open(out: *mut *mut tw_event_reader, path: *const c_char) -> tw_status;
    #[must_use]
    pub fn tw_event_reader_next(out: *mut tw_event, reader: *mut tw_event_reader) -> tw_status;
    pub fn tw_event_reader_destroy(reader: *mut tw_event_reader);

    // distributed.h
    #[must_use]
    pub fn tw_options_add_shard(
        opts: *mut tw_options,
        var: *const tw_tensor,
        global_shape: *const i64,
        offset: *const i64,
    ) -> tw_status;
    #[must_use]
    pub fn tw_saver_create_from_options(out: *mut *mut tw_saver, opts: *const tw_options) -> tw_status;
    /// Experimental (`TW_EXPERIMENTAL_API`).
    #[must_use]
    pub fn tw_options_set_collective(
        opts: *mut tw_options,
        collective: *const tw_collective,
        user_data: *mut c_void,
    ) -> tw_status;
}
