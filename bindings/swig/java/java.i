// The Java part of bindings/swig/trainwatch.i (included there, before the facade; java_names.i comes
// first of all): exceptions both ways, direct ByteBuffers for tensor data, and the references a Java
// object holds so that the garbage collector cannot free what the library borrows.
%{
#include "java/java_error.hpp"
%}

%{
// Caches the classes exceptions are converted with, while the loading class loader is at hand.
extern "C" SWIGEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *) {
  JNIEnv *env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void **>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  return trainwatch::java::cache_classes(env) ? JNI_VERSION_1_6 : JNI_ERR;
}
%}

// The JNI library is loaded by the first use of any class (NativeLibraries.java says from where: the
// jar's bundled libraries, -Dorg.trainwatch.library or java.library.path).
%pragma(java) jniclasscode=%{
  static {
    NativeLibraries.load();
  }
%}

// ------------------------------------------------------------------------------------------------
// Exceptions
// ------------------------------------------------------------------------------------------------

// A Java override that throws: keep the Throwable itself for the C call to rethrow.
%feature("director:except") {
  jthrowable $error = jenv->ExceptionOccurred();
  if ($error != nullptr) throw trainwatch::java::JavaError::fetch(jenv, $error);
}

// Any facade call: a Java exception thrown in a callback comes out unchanged; a failing status
// becomes the TrainWatchException subclass for it.
%exception {
  try {
    $action
  } catch (const trainwatch::java::JavaError &e) {
    e.rethrow(jenv);
    return $null;
  } catch (const trainwatch::Error &e) {
    trainwatch::java::throw_status(jenv, e);
    return $null;
  } catch (const Swig::DirectorException &e) {
    e.throwException(jenv);
    return $null;
  } catch (const std::bad_alloc &) {
    SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "trainwatch: out of memory");
    return $null;
  } catch (const std::exception &e) {
    SWIG_JavaThrowException(jenv, SWIG_JavaRuntimeException, e.what());
    return $null;
  }
}

// A proxy used after delete(): a clear exception, not a null dereference.
%typemap(check) SWIGTYPE *self %{
  if (!$1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalStateException, "$1_basetype has been deleted");
    return $null;
  }
%}

%ignore trainwatch::Error;
%ignore trainwatch::SessionRef::SessionRef;
%ignore trainwatch::StepContext::StepContext;
%ignore trainwatch::RunContext::RunContext;

// ------------------------------------------------------------------------------------------------
// Tensors: views of direct ByteBuffers (zero copy) and ByteBuffers over any view
// ------------------------------------------------------------------------------------------------
%{
#include "java/java_buffers.hpp"
%}
%typemap(in, numinputs=0) JNIEnv *jenv "$1 = jenv;"
%typemap(jni) jobject byte_buffer, jobject as_byte_buffer "jobject"
%typemap(jtype) jobject byte_buffer, jobject as_byte_buffer "java.nio.ByteBuffer"
%typemap(jstype) jobject byte_buffer, jobject as_byte_buffer "java.nio.ByteBuffer"
%typemap(javain) jobject byte_buffer "$javainput"
%typemap(in) jobject byte_buffer "$1 = $input;"
%typemap(out) jobject as_byte_buffer "$result = $1;"
%typemap(javaout) jobject as_byte_buffer { return $jnicall; }

%ignore trainwatch::Tensor::Tensor(std::string, void *, int, std::vector<int64_t>, std::vector<int64_t>);
%ignore trainwatch::Tensor::Tensor(std::string, void *, int, std::vector<int64_t>);
%javamethodmodifiers trainwatch::Tensor::view_of_buffer "private";
%javamethodmodifiers trainwatch::Tensor::as_byte_buffer "private";
%rename(asByteBuffer_) trainwatch::Tensor::as_byte_buffer;
%extend trainwatch::Tensor {
  static trainwatch::Tensor view_of_buffer(JNIEnv *jenv, const std::string &name, jobject byte_buffer, int dtype,
                                           const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
    return trainwatch::java::view_of_buffer(jenv, name, byte_buffer, dtype, shape, strides);
  }
  jobject as_byte_buffer(JNIEnv *jenv) const { return trainwatch::java::byte_buffer_of(jenv, *$self); }
}
%typemap(javacode) trainwatch::Tensor %{
  private java.nio.ByteBuffer buffer;  // the memory a view of a ByteBuffer borrows, kept reachable

  /** A row-major view of a direct ByteBuffer's memory (zero copy): the Tensor keeps the buffer
   *  reachable, and whoever borrows the Tensor (a session's variables, a run's feeds) uses that
   *  memory in place. Throws TrainWatchException.InvalidArgument when the view does not fit. */
  public static Tensor of(String name, java.nio.ByteBuffer data, int dtype, long... shape) {
    return of(name, data, dtype, shape, new long[0]);
  }

  /** A strided view (strides in elements, as in DLPack; empty = row-major). */
  public static Tensor of(String name, java.nio.ByteBuffer data, int dtype, long[] shape, long[] strides) {
    Tensor view = viewOfBuffer(name, data, dtype, int64Vector(shape), int64Vector(strides));
    view.buffer = data;
    return view;
  }

  /** A new zero-filled direct buffer, in native byte order, and a view of it. */
  public static Tensor allocate(String name, int dtype, long... shape) {
    long count = 1;
    for (long n : shape) count = Math.multiplyExact(count, n);
    long bytes = Math.multiplyExact(count, TrainWatch.dtypeSize(dtype));
    if (bytes > Integer.MAX_VALUE || count < 0) {
      throw new TrainWatchException.InvalidArgument("cannot allocate " + bytes + " bytes for '" + name + "'");
    }
    return of(name, java.nio.ByteBuffer.allocateDirect((int) bytes).order(java.nio.ByteOrder.nativeOrder()), dtype,
              shape);
  }

  /** A float32 tensor holding a copy of {@code values}. */
  public static Tensor ofFloats(String name, float[] values, long... shape) {
    Tensor t = allocate(name, DType.FLOAT32, shape.length == 0 && values.length != 1 ? new long[] {values.length} : shape);
    t.asByteBuffer().asFloatBuffer().put(values);
    return t;
  }

  /** A float32 scalar. */
  public static Tensor scalar(String name, float value) {
    return ofFloats(name, new float[] {value});
  }

  /** The bytes this view spans, in native byte order, aliasing its memory (no copy). Valid only while
   *  that memory is: a fetched result or a feed until its run returns, a variable while the session
   *  lives. */
  public java.nio.ByteBuffer asByteBuffer() {
    java.nio.ByteBuffer bytes = asByteBuffer_();
    return bytes.order(java.nio.ByteOrder.nativeOrder());
  }

  public long[] shapeArray() {
    Int64Vector dims = shape();
    long[] out = new long[dims.size()];
    for (int i = 0; i < out.length; i++) out[i] = dims.get(i);
    return out;
  }

  /** A copy of a contiguous float32 view's elements. */
  public float[] toFloatArray() {
    float[] out = new float[contiguousCount(DType.FLOAT32)];
    asByteBuffer().asFloatBuffer().get(out);
    return out;
  }

  /** A copy of a contiguous float64 view's elements. */
  public double[] toDoubleArray() {
    double[] out = new double[contiguousCount(DType.FLOAT64)];
    asByteBuffer().asDoubleBuffer().get(out);
    return out;
  }

  /** A copy of a contiguous int64 view's elements. */
  public long[] toLongArray() {
    long[] out = new long[contiguousCount(DType.INT64)];
    asByteBuffer().asLongBuffer().get(out);
    return out;
  }

  /** A copy of a contiguous int32 view's elements. */
  public int[] toIntArray() {
    int[] out = new int[contiguousCount(DType.INT32)];
    asByteBuffer().asIntBuffer().get(out);
    return out;
  }

  /** The first element as a double (TF's `.item()` on a scalar), for bool, integer and float32/64 views. */
  public double doubleValue() {
    if (elementCount() < 1) throw new TrainWatchException.InvalidArgument("'" + name() + "' has no elements");
    java.nio.ByteBuffer b = asByteBuffer();
    switch (dtype()) {
      case DType.FLOAT32: return b.getFloat(0);
      case DType.FLOAT64: return b.getDouble(0);
      case DType.INT64: case DType.UINT64: return b.getLong(0);
      case DType.INT32: case DType.UINT32: return dtype() == DType.INT32 ? b.getInt(0) : Integer.toUnsignedLong(b.getInt(0));
      case DType.INT16: return b.getShort(0);
      case DType.UINT16: return Short.toUnsignedInt(b.getShort(0));
      case DType.INT8: return b.get(0);
      case DType.UINT8: case DType.BOOL: return Byte.toUnsignedInt(b.get(0));
      default:
        throw new TrainWatchException.InvalidArgument(
            "doubleValue() does not read " + TrainWatch.dtypeName(dtype()) + " '" + name() + "'");
    }
  }

  private int contiguousCount(int expected) {
    if (dtype() != expected) {
      throw new TrainWatchException.InvalidArgument("'" + name() + "' is " + TrainWatch.dtypeName(dtype()) + ", not "
                                                    + TrainWatch.dtypeName(expected));
    }
    if (!strides().isEmpty()) {
      throw new TrainWatchException.InvalidArgument("'" + name() + "' is a strided view; read it with asByteBuffer()");
    }
    return Math.toIntExact(elementCount());
  }

  static Int64Vector int64Vector(long[] values) {
    Int64Vector v = new Int64Vector();
    for (long x : values) v.add(x);
    return v;
  }
%}

// ------------------------------------------------------------------------------------------------
// Lifetimes: what the library borrows stays reachable from the Java object that lent it
// ------------------------------------------------------------------------------------------------
// Hooks keep their callback objects, Options their variables (and the buffers behind them) and
// init/ready functions, a Session its Options and hooks: dropping the last reference to any of them
// in Java cannot free memory the library still uses. The constructors taking callbacks are replaced
// by Java ones that take Lists and keep what they are given.
%typemap(javacode) trainwatch::HookHandle %{
  private final java.util.List<Object> retained = new java.util.ArrayList<>();

  /** Keeps objects the native hook borrows reachable for as long as this hook is. */
  protected final void retain(Object... objects) {
    for (Object o : objects) if (o != null) retained.add(o);
  }

  // ---- TF's SessionRunHook callbacks of a built-in hook, for subclasses (docs/ARCHITECTURE.md) ----
  // A subclass of a built-in hook overrides any of these as TF code does; super.<callback>(…) runs the
  // built-in's (its fetches, feeds and stop requests act for the subclass), not calling it skips it.
  // They may be called only from the same callback of the subclass while a session runs it.
  // SessionRunHook (a hook written in Java) declares its own.

  /** TF's begin(); for a built-in hook, the built-in's. */
  public void begin(SessionRef session) {
    superCalls().superBegin(session);
  }

  /** TF's after_create_session(session, coord); for a built-in hook, the built-in's. */
  public void afterCreateSession(SessionRef session) {
    superCalls().superAfterCreateSession(session);
  }

  /** TF's before_run(run_context): for a built-in hook, requests what the built-in fetches (its
   *  SessionRunArgs: {@link RunContext#requests()} lists them afterwards) and feeds. */
  public void beforeRun(RunContext ctx) {
    superCalls().superBeforeRun(ctx);
  }

  /** TF's after_run(run_context, run_values): for a built-in hook, the built-in behaviour (NaN check
   *  and its action, logging, saving, stopping…) over the values {@code ctx.result(…)} reads. */
  public void afterRun(RunContext ctx) {
    superCalls().superAfterRun(ctx);
  }

  /** TF's end(session); for a built-in hook, the built-in's. */
  public void end(SessionRef session) {
    superCalls().superEnd(session);
  }

  /** Instead of end() when a run failed (trainwatch's); for a built-in hook, the built-in's. */
  public void onError(SessionRef session, int error) {
    superCalls().superOnError(session, error);
  }

  /** The callbacks and extension points this built-in hook's class overrides (what Java runs), in TF's
   *  order: empty for a built-in hook, or a subclass overriding none, which runs fully natively. */
  public java.util.List<String> overriddenCallbacks() {
    return SubclassedHook.overridden(this);
  }

  private HookHandle forSession;  // what sessions run for this hook, decided when the first one takes it

  /** This hook, or the wrapper that runs its subclass's overrides (kept: one per hook). */
  HookHandle forSession() {
    if (forSession == null) forSession = SubclassedHook.forSession(this);
    return forSession;
  }

  /** The wrapper running this subclass's overrides: its super calls run the built-in's. */
  final WrappedHook superCalls() {
    if (!(forSession instanceof WrappedHook) || forSession == this) {
      throw new TrainWatchException.FailedPrecondition(getClass().getName() + ": the built-in's callbacks run as "
          + "super calls from a subclass's overrides, while a session runs them");
    }
    return (WrappedHook) forSession;
  }

  static HookVector hookVector(java.util.List<? extends HookHandle> hooks) {
    HookVector v = new HookVector();
    if (hooks != null) for (HookHandle h : hooks) v.add(h == null ? null : h.forSession());
    return v;
  }

  static StringVector stringVector(java.util.List<String> strings) {
    StringVector v = new StringVector();
    if (strings != null) for (String s : strings) v.add(s);
    return v;
  }
%}

%typemap(javacode) trainwatch::Options %{
  private final java.util.List<Object> retained = new java.util.ArrayList<>();
%}
%typemap(javain, post="      retained.add($javainput);") const trainwatch::Tensor &variable "Tensor.getCPtr($javainput)"
%typemap(javain, post="      retained.add($javainput);") trainwatch::InitFunction *fn, trainwatch::ReadyFunction *fn
  "$javaclassname.getCPtr($javainput)"

%pragma(java) modulecode=%{
  // Every log sink ever set, kept reachable: a line being written on another thread may still be in
  // the one a later setLogSink replaced.
  private static final java.util.List<LogSink> logSinks =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());

  // Every progress sink ever set: an operation keeps the sink set when it began, so one replaced while
  // a (background) save runs is still called.
  private static final java.util.List<ProgressSink> progressSinks = new java.util.ArrayList<>();

  /** Sends the progress of this process's saves and restores (Saver, CheckpointSaverHook and session
   *  restores, background saves included) to {@code listener}: an operation is reported on once it has
   *  run {@code everyNSecs}, then every {@code everyNSecs}, and once when it succeeds (0: after every
   *  chunk). {@code listener == null} goes back to the default, INFO lines of the library's log
   *  ("Saving checkpoint &lt;path&gt;: 512.0 of 1073.7 MB (48%), 250.3 MB/s, 2.2 s left"). The listener
   *  runs on the thread doing the work (a background save's, a compressing one), possibly on several
   *  at once: it must be thread-safe and return quickly; what it throws is dropped. Throws
   *  TrainWatchException.InvalidArgument for a negative, NaN or infinite everyNSecs (nothing changes). */
  public static void setProgressListener(ProgressListener listener, double everyNSecs) {
    synchronized (progressSinks) {
      ProgressSink sink = listener == null ? null : progressSink(listener);
      setProgressSink(everyNSecs, sink);
      if (sink != null) progressSinks.add(sink);
    }
  }

  /** The ProgressSink (a SWIG director) that calls {@code listener}. */
  private static ProgressSink progressSink(ProgressListener listener) {
    return new ProgressSink() {
      @Override
      public void report(int kind, String path, long bytesDone, long bytesTotal, double elapsedSecs,
                         boolean finished) {
        try {
          listener.onProgress(new ProgressReport(kind, path, bytesDone, bytesTotal, elapsedSecs, finished));
        } catch (Throwable dropped) {
          // Dropped here rather than by the facade: on a library thread attached for this call only,
          // the global reference a Throwable crossing into C++ takes could not be released once the
          // thread is detached again.
        }
      }
    };
  }

  /** {@link #setProgressListener(ProgressListener, double)} every 2 seconds, the library's default. */
  public static void setProgressListener(ProgressListener listener) {
    setProgressListener(listener, 2.0);
  }
%}
%typemap(javain, post="    if ($javainput != null) logSinks.add($javainput);") trainwatch::LogSink *sink
  "LogSink.getCPtr($javainput)"
// ProgressListener and ProgressReport are the API; ProgressSink is their plumbing.
%javamethodmodifiers trainwatch::set_progress_sink "private";
%typemap(javaclassmodifiers) trainwatch::ProgressSink "abstract class";

%define %tw_java_constructors_by_hand(CLASS)
%javamethodmodifiers trainwatch::CLASS::CLASS "protected";
%enddef
%tw_java_constructors_by_hand(Session)
%tw_java_constructors_by_hand(CheckpointSaverHook)
%tw_java_constructors_by_hand(LoggingTensorHook)
%tw_java_constructors_by_hand(FeedFnHook)
%tw_java_constructors_by_hand(FinalOpsHook)
%tw_java_constructors_by_hand(GlobalStepWaiterHook)
%javamethodmodifiers trainwatch::NanTensorHook::NanTensorHook(const std::vector<std::string> &, const Options *, NanFunction *) "protected";
%javamethodmodifiers trainwatch::NanTensorHook::NanTensorHook(const std::vector<std::string> &, const Options *) "protected";

// delete() from inside one of the session's own callbacks (or while another thread runs it) throws
// FailedPrecondition and keeps the session, instead of freeing it under the running call.
%typemap(javadestruct_derived, methodname="delete", methodmodifiers="public synchronized") trainwatch::Session {
    if (swigCPtr != 0) {
      if (swigCMemOwn) {
        destroy();
        swigCMemOwn = false;
        $jnicall;
      }
      swigCPtr = 0;
    }
    super.delete();
  }

%typemap(javainterfaces) trainwatch::Session "AutoCloseable"
// try-with-resources releases a Saver's native saver, and the lock of the directory it saves into, at
// the block's end (C24); a call after close() throws TrainWatchException.FailedPrecondition.
%typemap(javainterfaces) trainwatch::Saver "AutoCloseable"
%typemap(javacode) trainwatch::Session %{
  private final java.util.List<Object> retained = new java.util.ArrayList<>();

  /** A session of {@code kind} (Kind.MONITORED, SINGULAR or MONITORED_TRAINING); options may be null.
   *  Hooks run in list order; chiefOnlyHooks are for MONITORED_TRAINING only. */
  public Session(int kind, Options options, java.util.List<? extends HookHandle> hooks,
                 java.util.List<? extends HookHandle> chiefOnlyHooks) {
    this(kind, options, HookHandle.hookVector(hooks), HookHandle.hookVector(chiefOnlyHooks));
    if (options != null) retained.add(options);
    if (hooks != null) retained.addAll(hooks);
    if (chiefOnlyHooks != null) retained.addAll(chiefOnlyHooks);
  }

  /** TF's MonitoredSession: recovers from AbortedException/UnavailableException. */
  public static Session monitored(Options options, HookHandle... hooks) {
    return new Session(Kind.MONITORED, options, java.util.Arrays.asList(hooks), null);
  }

  /** TF's SingularMonitoredSession: no recovery. */
  public static Session singular(Options options, HookHandle... hooks) {
    return new Session(Kind.SINGULAR, options, java.util.Arrays.asList(hooks), null);
  }

  /** TF's MonitoredTrainingSession: a MonitoredSession with the default hooks its options ask for. */
  public static Session monitoredTraining(Options options, java.util.List<? extends HookHandle> hooks,
                                          java.util.List<? extends HookHandle> chiefOnlyHooks) {
    return new Session(Kind.MONITORED_TRAINING, options, hooks, chiefOnlyHooks);
  }

  /** One step with hooks; the feeds' memory is used in place for the call. */
  public void run(StepFunction step, Tensor... feeds) {
    run(step, Tensors.vector(feeds));
    java.lang.ref.Reference.reachabilityFence(feeds);
  }

  /** One step with hooks, the step given as a lambda. */
  public void run(Step step, Tensor... feeds) {
    run(Step.function(step), feeds);
  }
%}

%typemap(javacode) trainwatch::SessionRef %{
  /** TF's {@code session.run(name)} (the {@code session.run(self._global_step_tensor)} idiom): the value
   *  of an output published in the run in progress (after_run), else of a registered variable, else of
   *  "global_step" — a copy, read without running a step or any hook. Throws
   *  TrainWatchException.NotFound naming a name that matches none; {@code doubleValue()} reads a scalar. */
  public Tensor run(String name) {
    return SessionValues.value(this, name);
  }

  /** The values of {@code names}, in their order (TF's {@code session.run([a, b])}). */
  public java.util.List<Tensor> run(String... names) {
    if (names == null) throw new NullPointerException("the fetch names are null");
    return SessionValues.values(this, java.util.Arrays.asList(names));
  }

  /** The values of {@code names}, in their order. */
  public java.util.List<Tensor> run(java.util.List<String> names) {
    return SessionValues.values(this, names);
  }

  /** Key → the value of its name (TF's {@code session.run({"k": tensor})}), in the map's order. */
  public java.util.Map<String, Tensor> run(java.util.Map<String, String> names) {
    return SessionValues.values(this, names);
  }

  /** One step without hooks and without touching global_step (evaluation, iterator resets). */
  public void runWithoutHooks(Step step, Tensor... feeds) {
    runWithoutHooks(Step.function(step), Tensors.vector(feeds));
    java.lang.ref.Reference.reachabilityFence(feeds);
  }
%}

%typemap(javacode) trainwatch::NanTensorHook %{
  /** Watches {@code watch} (names or globs such as "grad/*") with the options' action (NanAction.*),
   *  every_n_steps and Inf detection; fn decides for NanAction.CALLBACK. */
  public NanTensorHook(java.util.List<String> watch, Options options, NanFunction fn) {
    this(stringVector(watch), options, fn);
    retain(fn);
  }
%}

%typemap(javacode) trainwatch::CheckpointSaverHook %{
  /** Saves under checkpointDir on the schedule of the options (save_steps / save_secs); listeners run
   *  around every save. */
  public CheckpointSaverHook(String checkpointDir, Options options, CheckpointSaverListener... listeners) {
    this(checkpointDir, options, new ListenerVector(listeners));
    retain((Object[]) listeners);
  }

  /** TF's _save(session, step): saves a checkpoint (listeners around it) and returns the stop request
   *  (true: a listener asked to stop). Override it to save differently; super.save(…) saves as the
   *  built-in does. */
  protected boolean save(SessionRef session, long step) {
    return superCalls().superSave(session, step);
  }
%}

%typemap(javacode) trainwatch::LoggingTensorHook %{
  /** Logs the named values (tags may be empty or one per name) on the options' schedule, through
   *  formatter when it is not null. */
  public LoggingTensorHook(java.util.List<String> names, java.util.List<String> tags, Options options,
                           LogFormatter formatter) {
    this(stringVector(names), stringVector(tags), options, formatter);
    retain(formatter);
  }

  /** TF's _log_tensors(tensor_values): logs the values (each named by its tag) when the hook triggers.
   *  Override it to log elsewhere; super.logTensors(values) logs as the built-in does. The values are
   *  views valid during the call. */
  protected void logTensors(java.util.List<Tensor> values) {
    superCalls().superLogTensors(values instanceof TensorVector ? (TensorVector) values : new TensorVector(values));
  }
%}

%typemap(javacode) trainwatch::StepCounterHook %{
  /** TF's _log_and_record(elapsed_steps, elapsed_time, global_step): logs the step rate and writes the
   *  "global_step/sec" summary. Override it to record elsewhere; super.logAndRecord(…) does the built-in's. */
  protected void logAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
    superCalls().superLogAndRecord(elapsedSteps, elapsedTime, globalStep);
  }
%}

// Where the Java constructor has the facade's own signature, the native one takes a marker argument.
%ignore trainwatch::FeedFnHook::FeedFnHook(FeedFunction *);
%ignore trainwatch::GlobalStepWaiterHook::GlobalStepWaiterHook(int64_t, const Options *, GlobalStepFunction *);
%extend trainwatch::FeedFnHook {
  FeedFnHook(trainwatch::FeedFunction *fn, bool retained) { return new trainwatch::FeedFnHook(fn); }
}
%extend trainwatch::GlobalStepWaiterHook {
  GlobalStepWaiterHook(int64_t wait_until_step, const trainwatch::Options *opts, trainwatch::GlobalStepFunction *fn,
                       bool retained) {
    return new trainwatch::GlobalStepWaiterHook(wait_until_step, opts, fn);
  }
}

%typemap(javacode) trainwatch::FeedFnHook %{
  /** Adds fn's feeds to every run (TF's FeedFnHook). */
  public FeedFnHook(FeedFunction fn) {
    this(fn, true);
    retain(fn);
  }
%}

%typemap(javacode) trainwatch::GlobalStepWaiterHook %{
  /** Waits in begin() until the global step (read through fn, or the session's own when null) reaches
   *  waitUntilStep; poll interval and bound in the options. */
  public GlobalStepWaiterHook(long waitUntilStep, Options options, GlobalStepFunction fn) {
    this(waitUntilStep, options, fn, true);
    retain(fn);
  }
%}

%typemap(javacode) trainwatch::FinalOpsHook %{
  /** Runs finalStep once at end() without hooks, with feeds (copied now); values() then holds copies
   *  of what it published. */
  public FinalOpsHook(StepFunction finalStep, Tensor... feeds) {
    this(finalStep, Tensors.vector(feeds));
    retain(finalStep);
  }
%}
