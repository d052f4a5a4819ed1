// trainwatch.hpp — a header-only C++17 facade over the trainwatch C API (include/trainwatch.h).
//
// It uses nothing but the public C header, so it is what every object-oriented binding builds on: the
// SWIG interface (bindings/swig/trainwatch.i) wraps these classes for Python, Java and C#, and C++
// programs may use it directly.
//
//  - Failing C calls throw trainwatch::Error (status code + the thread's message).
//  - Callbacks are virtual methods: subclass Hook, CheckpointSaverListener, StepFunction, … The C
//    trampolines catch every exception a callback throws (a target-language exception wrapped by SWIG
//    included), return a failing status to the library, and the C call that ran the callback rethrows
//    that same exception once the library has returned. A callback throwing trainwatch::Error returns
//    its code, so Error(TW_ABORTED, …) from a step triggers recovery and Error(TW_OUT_OF_RANGE, …)
//    ends the input cleanly; any other exception is TW_CALLBACK_FAILED.
//  - Handles are RAII and move-only. Hooks and listeners may be destroyed before or after the sessions
//    that hold them: a callback of a destroyed object fails the operation instead of touching freed
//    memory. StepFunction, InitFunction, … objects must outlive the calls and sessions using them.
//  - Thread rules are the C API's: a session and its hooks are used by one thread at a time.
//
// One header per area of include/trainwatch/ (bindings/cpp/trainwatch/*.hpp), each including the parts
// it builds on: common < numerics, session < summary < hooks, checkpoint. The SWIG interface
// (bindings/swig/trainwatch.i) wraps them in that order.
#ifndef TRAINWATCH_HPP
#define TRAINWATCH_HPP

#include "trainwatch/checkpoint.hpp"
#include "trainwatch/common.hpp"
#include "trainwatch/hooks.hpp"
#include "trainwatch/numerics.hpp"
#include "trainwatch/session.hpp"
#include "trainwatch/summary.hpp"

#endif  // TRAINWATCH_HPP
