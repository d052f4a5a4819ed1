// Java names for what bindings/swig/trainwatch.i declares; included before any declaration, since a
// rename only applies to what follows it.
//
// The header's named enums become classes of int constants without their prefix (DType.FLOAT32,
// Option.CHECKPOINT_EVERY_N_STEPS, NanAction.ROLLBACK, …): the facade takes ints. Status codes (an
// anonymous enum) keep their C names as constants of class TrainWatch (TrainWatch.TW_ABORTED), the
// spelling statusName() returns. Methods and fields are lowerCamelCase; the hook base class is TF's SessionRunHook.
// int64_t is C's long on LP64 (swig -DSWIGWORDSIZE64), which SWIG maps to Java's int by default:
// C long is 64 bits here, so it is Java's long.
%apply long long { long };
%apply const long long & { const long & };
%typemap(jboxtype) long, const long & "Long"

%include <enumtypeunsafe.swg>
%javaconst(1);
%javaconst(0) TW_UNSET;  // INT64_MIN is not Java: read the value at run time
%javaconst(0) UNSET;

%define %tw_java_enum(CNAME, JAVANAME, PREFIX)
%rename(JAVANAME) CNAME;
%rename("%(strip:[" #PREFIX "])s", %$isenumitem, match$parentNode$name=#CNAME) "";
%enddef
%tw_java_enum(tw_dtype, DType, TW_)
%tw_java_enum(tw_option, Option, TW_OPT_)
%tw_java_enum(tw_option_state, OptionState, TW_OPTION_)
%tw_java_enum(tw_option_type, OptionType, TW_OPTION_TYPE_)
%tw_java_enum(tw_log_level, LogLevel, TW_LOG_)
%tw_java_enum(tw_nan_action, NanAction, TW_NAN_ACTION_)
%tw_java_enum(tw_session_log_status, SessionLogStatus, TW_)  // items share one scope: STOP, NONE, OTHER clash
%tw_java_enum(tw_summary_value_kind, SummaryValueKind, TW_)
%tw_java_enum(tw_event_kind, EventKind, TW_)
%tw_java_enum(tw_progress_kind, ProgressKind, TW_PROGRESS_)
%rename("%(upper)s", %$isenumitem, notregexmatch$name="^TW_") "";  // Session.Kind.MONITORED, …

%rename("%(lowercamelcase)s", %$isfunction, %$not %$isconstructor, %$not %$isdestructor) "";
%rename("%(lowercamelcase)s", %$isvariable) "";
%rename(SessionRunHook) trainwatch::Hook;
