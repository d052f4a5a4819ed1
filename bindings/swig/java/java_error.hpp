// Java exceptions through the C++ facade, both ways.
//
// Java → C: a Java callback (director method) that throws is turned into JavaError, which holds the
// Throwable itself. The facade's trampoline stores it and returns its status to the library; the C
// call's wrapper rethrows it and rethrow() throws the very same object in Java, stack trace included.
// A TrainWatchException thrown by a callback keeps its status (AbortedException from a step makes the
// run recoverable, OutOfRangeException ends it cleanly), and java.util.NoSuchElementException — what
// an exhausted Iterator throws — is TW_STOP_ITERATION, a clean end of input.
//
// C → Java: trainwatch::Error becomes the TrainWatchException subclass for its status
// (TrainWatchException.of(code, message)).
#ifndef TRAINWATCH_JAVA_ERROR_HPP
#define TRAINWATCH_JAVA_ERROR_HPP

#include <jni.h>

#include <memory>
#include <string>

#include "trainwatch.hpp"

namespace trainwatch {
namespace java {

// Global references to the classes the conversions need, taken once when the library is loaded
// (FindClass on a thread the library attached itself would not see the application's classes).
struct Classes {
  jclass trainwatch_exception = nullptr;
  jmethodID exception_of = nullptr;
  jmethodID exception_code = nullptr;
  jclass no_such_element = nullptr;
  jclass out_of_memory = nullptr;
  jclass runtime_exception = nullptr;
};

inline Classes &classes() {
  static Classes cached;
  return cached;
}

inline jclass global_class(JNIEnv *env, const char *name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  jclass global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

// Called from JNI_OnLoad; false leaves a Java exception pending.
inline bool cache_classes(JNIEnv *env) {
  Classes &c = classes();
  c.trainwatch_exception = global_class(env, "org/trainwatch/TrainWatchException");
  c.no_such_element = global_class(env, "java/util/NoSuchElementException");
  c.out_of_memory = global_class(env, "java/lang/OutOfMemoryError");
  c.runtime_exception = global_class(env, "java/lang/RuntimeException");
  if (!c.trainwatch_exception || !c.no_such_element || !c.out_of_memory || !c.runtime_exception) return false;
  c.exception_of =
      env->GetStaticMethodID(c.trainwatch_exception, "of", "(ILjava/lang/String;)Lorg/trainwatch/TrainWatchException;");
  c.exception_code = env->GetMethodID(c.trainwatch_exception, "code", "()I");
  return c.exception_of != nullptr && c.exception_code != nullptr;
}

// A global reference, released on whichever thread drops the last copy (attached or not: a thread
// the JVM does not know keeps the reference rather than crash).
class GlobalRef {
 public:
  GlobalRef(JNIEnv *env, jobject object) : object_(env->NewGlobalRef(object)) { env->GetJavaVM(&vm_); }
  GlobalRef(const GlobalRef &) = delete;
  GlobalRef &operator=(const GlobalRef &) = delete;
  ~GlobalRef() {
    JNIEnv *env = nullptr;
    if (vm_->GetEnv(reinterpret_cast<void **>(&env), JNI_VERSION_1_6) == JNI_OK) env->DeleteGlobalRef(object_);
  }
  jobject get() const noexcept { return object_; }

 private:
  JavaVM *vm_ = nullptr;
  jobject object_;
};

inline tw_status status_of(JNIEnv *env, jthrowable thrown) {
  const Classes &c = classes();
  if (env->IsInstanceOf(thrown, c.no_such_element)) return TW_STOP_ITERATION;
  if (!env->IsInstanceOf(thrown, c.trainwatch_exception)) return TW_CALLBACK_FAILED;
  const jint code = env->CallIntMethod(thrown, c.exception_code);
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return TW_CALLBACK_FAILED;
  }
  return code > 0 && code != TW_CALLBACK_FAILED ? static_cast<tw_status>(code) : TW_CALLBACK_FAILED;
}

// Throwable.toString(): "java.lang.IllegalStateException: the text".
inline std::string describe(JNIEnv *env, jthrowable thrown) {
  jclass object_class = env->FindClass("java/lang/Object");
  jmethodID to_string = object_class ? env->GetMethodID(object_class, "toString", "()Ljava/lang/String;") : nullptr;
  jstring text = to_string ? static_cast<jstring>(env->CallObjectMethod(thrown, to_string)) : nullptr;
  std::string result = "a Java exception";
  if (text != nullptr && !env->ExceptionCheck()) {
    const char *utf = env->GetStringUTFChars(text, nullptr);
    if (utf != nullptr) {
      result = utf;
      env->ReleaseStringUTFChars(text, utf);
    }
  }
  if (env->ExceptionCheck()) env->ExceptionClear();
  return result;
}

class JavaError : public Error {
 public:
  // Takes the Java exception pending on this thread (`thrown`) off it.
  static JavaError fetch(JNIEnv *env, jthrowable thrown) {
    env->ExceptionClear();  // no JNI call but a few may run while an exception is pending
    return JavaError(status_of(env, thrown), describe(env, thrown), std::make_shared<GlobalRef>(env, thrown));
  }

  // Throws the original Throwable again.
  void rethrow(JNIEnv *env) const { env->Throw(static_cast<jthrowable>(thrown_->get())); }

 private:
  JavaError(tw_status code, const std::string &message, std::shared_ptr<GlobalRef> thrown)
      : Error(code, message), thrown_(std::move(thrown)) {}

  std::shared_ptr<GlobalRef> thrown_;  // shared: exception objects are copied
};

// Throws the TrainWatchException subclass for a failing status.
inline void throw_status(JNIEnv *env, const Error &error) {
  const Classes &c = classes();
  jstring message = env->NewStringUTF(error.what());
  if (message == nullptr) return;  // OutOfMemoryError pending
  jobject exception =
      env->CallStaticObjectMethod(c.trainwatch_exception, c.exception_of, static_cast<jint>(error.code()), message);
  if (exception != nullptr && !env->ExceptionCheck()) env->Throw(static_cast<jthrowable>(exception));
}

}  // namespace java
}  // namespace trainwatch

#endif  // TRAINWATCH_JAVA_ERROR_HPP
