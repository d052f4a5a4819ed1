// Tensor views of direct java.nio.ByteBuffers, and ByteBuffers over tensor views: large data crosses
// between Java and the library without a copy.
#ifndef TRAINWATCH_JAVA_BUFFERS_HPP
#define TRAINWATCH_JAVA_BUFFERS_HPP

#include <jni.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trainwatch.hpp"

namespace trainwatch {
namespace java {

// Bytes from the first element to one past the last that the view touches (0 for no elements).
inline int64_t span_bytes(const Tensor &t) {
  const size_t element_size = t.element_size();
  if (element_size == 0) throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has an unknown dtype");
  const std::vector<int64_t> &shape = t.shape(), &strides = t.strides();
  if (!strides.empty() && strides.size() != shape.size()) {
    throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has " + std::to_string(strides.size()) +
                                         " strides for " + std::to_string(shape.size()) + " dimensions");
  }
  const int64_t limit = INT64_MAX / static_cast<int64_t>(element_size);
  int64_t last = 0, row_major = 1;  // offset of the last element, in elements
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] < 0) throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has a negative dimension");
    if (shape[i] == 0) return 0;
    const int64_t stride = strides.empty() ? row_major : strides[i];
    if (stride < 0) throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has a negative stride");
    if (stride != 0 && shape[i] - 1 > (limit - last) / stride) {
      throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' spans more memory than can be addressed");
    }
    last += (shape[i] - 1) * stride;
    if (strides.empty()) row_major = shape[i] > limit / row_major ? limit : row_major * shape[i];
  }
  if (last + 1 > limit)
    throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' spans more memory than can be addressed");
  return (last + 1) * static_cast<int64_t>(element_size);
}

// A view of a direct ByteBuffer's memory, checked to fit in the buffer.
inline Tensor view_of_buffer(JNIEnv *env, const std::string &name, jobject buffer, int dtype,
                             const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
  if (buffer == nullptr) throw Error(TW_INVALID_ARGUMENT, "tensor '" + name + "': the ByteBuffer is null");
  void *data = env->GetDirectBufferAddress(buffer);
  const jlong capacity = env->GetDirectBufferCapacity(buffer);
  if (data == nullptr || capacity < 0) {
    throw Error(TW_INVALID_ARGUMENT,
                "tensor '" + name + "': the ByteBuffer is not direct (use ByteBuffer.allocateDirect)");
  }
  Tensor view(name, data, dtype, shape, strides);
  const int64_t needed = span_bytes(view);
  if (needed > capacity) {
    throw Error(TW_INVALID_ARGUMENT, "tensor '" + name + "' needs " + std::to_string(needed) +
                                         " bytes but its ByteBuffer has " + std::to_string(capacity));
  }
  return view;
}

// A direct ByteBuffer over the bytes a view spans (aliasing them).
inline jobject byte_buffer_of(JNIEnv *env, const Tensor &t) {
  const int64_t bytes = span_bytes(t);
  if (bytes > 0 && t.address() == 0) throw Error(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has no data");
  static char empty;
  jobject buffer = env->NewDirectByteBuffer(bytes > 0 ? reinterpret_cast<void *>(t.address()) : &empty, bytes);
  if (buffer == nullptr) {
    env->ExceptionClear();
    throw Error(TW_RESOURCE_EXHAUSTED, "could not create a ByteBuffer for '" + t.name() + "'");
  }
  return buffer;
}

}  // namespace java
}  // namespace trainwatch

#endif  // TRAINWATCH_JAVA_BUFFERS_HPP
