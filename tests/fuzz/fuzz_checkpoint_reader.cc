// libFuzzer target for the checkpoint reader: any bytes given to CheckpointReader must produce a
// Status, never a crash, a hang, an out-of-bounds access or an unbounded allocation.
//
// With TW_FUZZ_SEED_DIR set, LLVMFuzzerInitialize first writes valid checkpoints there (several
// dtypes, multi-chunk tensors, raw, zstd, Huffman- and tiered-coded planes) as the seed corpus.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/file/writer.h"

namespace ckpt = tw::checkpoint;

namespace {

void WriteSeeds(const std::string &dir) {
  std::vector<float> weights(300);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.02f * static_cast<float>((i * 7919) % 97) - 1.0f;
  std::vector<uint16_t> half(64, 0x3c00);
  int64_t step = 1234;
  const int64_t weights_shape[2] = {30, 10}, half_shape[1] = {64};
  tw_tensor a = TW_TENSOR_INIT, b = TW_TENSOR_INIT, c = TW_TENSOR_INIT;
  a.dtype = TW_FLOAT32, a.ndim = 2, a.shape = weights_shape, a.data = weights.data();
  b.dtype = TW_BFLOAT16, b.ndim = 1, b.shape = half_shape, b.data = half.data();
  c.dtype = TW_INT64, c.data = &step;
  const std::vector<tw::TensorRef> tensors = {tw::TensorRef(a, "w"), tw::TensorRef(b, "b"), tw::TensorRef(c, "step")};
  ckpt::WriteOptions small_chunks;
  small_chunks.chunk_bytes = 256;
  small_chunks.job = {0x5e, 0xed, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};  // an origin naming a job
  ckpt::WriteCheckpoint(dir + "/seed-chunked", tensors, small_chunks);
  ckpt::WriteCheckpoint(dir + "/seed-whole", tensors);
  // Exponent planes of 64 KiB, which the writer samples and tiered-codes (codec 3) or Huffman-codes
  // (codec 2).
  std::vector<uint16_t> gauss(1 << 16);
  uint32_t h = 1;
  for (uint16_t &g : gauss)
    h = h * 1664525u + 1013904223u, g = static_cast<uint16_t>((0x3C00 + (h >> 29) * 0x80) | (h >> 16 & 0x807F));
  const int64_t gauss_shape[1] = {1 << 16};
  tw_tensor d = TW_TENSOR_INIT;
  d.dtype = TW_BFLOAT16, d.ndim = 1, d.shape = gauss_shape, d.data = gauss.data();
  ckpt::WriteOptions tiered, huffman;
  tiered.tiered_planes = ckpt::TieredPlanes::kAlways;
  huffman.tiered_planes = ckpt::TieredPlanes::kNever;
  ckpt::WriteCheckpoint(dir + "/seed-tiered", {tw::TensorRef(d, "g")}, tiered);
  ckpt::WriteCheckpoint(dir + "/seed-huffman", {tw::TensorRef(d, "g")}, huffman);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (const char *dir = std::getenv("TW_FUZZ_SEED_DIR")) WriteSeeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<ckpt::CheckpointReader> reader;
  if (!ckpt::CheckpointReader::OpenMemory(data, size, "fuzz", &reader).ok()) return 0;
  reader->Verify(1);
  for (const ckpt::TensorEntry &tensor : reader->tensors()) {
    // The index is bounded by the input, but a tensor's size is not: a real caller's buffer would
    // already have that size; the fuzzer only reads small ones.
    if (tensor.byte_size() > (16u << 20)) continue;
    std::vector<uint8_t> buffer(tensor.byte_size());
    reader->ReadInto({{&tensor, buffer.data()}}, 1);
  }
  return 0;
}
