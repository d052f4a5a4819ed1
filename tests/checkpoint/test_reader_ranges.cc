// Reading parts of tensors (docs/tf-semantics.md D16): CheckpointReader's byte ranges
// decode only the chunks they overlap — shown by corrupting a chunk outside the range, which a range
// read does not notice and a read over it refuses — and a RestorePlan for a shard opens only the parts
// of a sharded checkpoint that hold its rows. Every read is all or nothing: a refused one leaves the
// destination untouched.
#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/format/format.h"
#include "checkpoint/restore_failure.h"
#include "checkpoint/restore_plan.h"
#include "checkpoint/sharded/shard_index.h"
#include "scratch_dir.h"

extern "C" {
#include <cmocka.h>
}

#include "sharded_rows.h"

namespace ckpt = tw::checkpoint;

namespace {

constexpr int64_t kRows = 64, kCols = 16;  // float32: 64 bytes a row
constexpr uint64_t kRowBytes = kCols * 4;
constexpr uint64_t kChunkBytes = 8 * kRowBytes;  // 8 chunks of 8 rows

std::vector<uint8_t> Bytes(size_t count, uint32_t seed) {
  std::vector<uint8_t> bytes(count);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < count; ++i) {
    x = x * 1664525u + 1013904223u;
    bytes[i] = static_cast<uint8_t>(x >> 24);
    if (i % 4 == 3) bytes[i] &= 0x3F;  // a finite float's top byte
  }
  return bytes;
}

tw::TensorRef Ref(const char *name, std::vector<int64_t> *shape, void *data) {
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.ndim = static_cast<int32_t>(shape->size());
  t.shape = shape->data();
  t.data = data;
  return tw::TensorRef(t, name);
}

void Write(const std::string &path, const char *name, std::vector<int64_t> shape, std::vector<uint8_t> *data) {
  ckpt::WriteOptions options;
  options.chunk_bytes = kChunkBytes;
  assert_true(ckpt::WriteCheckpoint(path, {Ref(name, &shape, data->data())}, options).ok());
}

void FlipByte(const std::string &path, uint64_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  file.read(&byte, 1);
  file.seekp(static_cast<std::streamoff>(offset));
  byte = static_cast<char>(byte ^ 0x10);
  file.write(&byte, 1);
}

// Rows [first, last) of the tensor through ProveRanges and FillRanges.
tw::Status ReadRows(const ckpt::CheckpointReader &reader, int64_t first, int64_t last, std::vector<uint8_t> *out) {
  const ckpt::CheckpointReader::Range range{reader.Find("t"), static_cast<uint64_t>(first) * kRowBytes,
                                            static_cast<uint64_t>(last) * kRowBytes, out->data()};
  TW_RETURN_IF_ERROR(reader.ProveRanges({range}));
  return reader.FillRanges({range});
}

void RangesReadExactlyTheirBytes(void **) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/ranges";
  std::vector<uint8_t> data = Bytes(kRows * kRowBytes, 1);
  Write(path, "t", {kRows, kCols}, &data);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  assert_int_equal(reader->Find("t")->chunks.size(), 8);
  // Inside one chunk, across chunk boundaries, exactly chunks, the whole tensor, nothing.
  const int64_t cases[][2] = {{1, 3}, {5, 30}, {8, 16}, {0, kRows}, {63, 64}, {12, 12}};
  for (const auto &rows : cases) {
    const size_t bytes = static_cast<size_t>(rows[1] - rows[0]) * kRowBytes;
    std::vector<uint8_t> out(bytes + 1, 0xA5);
    assert_true(ReadRows(*reader, rows[0], rows[1], &out).ok());
    assert_memory_equal(out.data(), data.data() + rows[0] * kRowBytes, bytes);
    assert_int_equal(out[bytes], 0xA5);  // not a byte more
  }
  std::vector<uint8_t> out(kRowBytes);
  const ckpt::CheckpointReader::Range outside{reader->Find("t"), kRows * kRowBytes - 1, kRows * kRowBytes + 1,
                                              out.data()};
  assert_int_equal(reader->ProveRanges({outside}).code(), TW_INVALID_ARGUMENT);
  scratch_dir_destroy(&dir);
}

void OnlyTheOverlappingChunksAreRead(void **) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/corrupt";
  std::vector<uint8_t> data = Bytes(kRows * kRowBytes, 2);
  Write(path, "t", {kRows, kCols}, &data);
  uint64_t chunk7 = 0;
  {
    std::unique_ptr<ckpt::CheckpointReader> reader;
    assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
    chunk7 = reader->Find("t")->chunks[7].offset;
  }
  FlipByte(path, chunk7);  // rows 56..63
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  std::vector<uint8_t> out(56 * kRowBytes, 0xA5);
  assert_true(ReadRows(*reader, 3, 56, &out).ok());  // chunks 0..6: the damage is not read
  assert_memory_equal(out.data(), data.data() + 3 * kRowBytes, 53 * kRowBytes);
  std::fill(out.begin(), out.end(), 0xA5);
  const tw::Status refused = ReadRows(*reader, 50, 60, &out);
  assert_int_equal(refused.code(), TW_DATA_LOSS);
  assert_non_null(std::strstr(refused.message().c_str(), "chunk 7 of 8"));
  for (uint8_t byte : out) assert_int_equal(byte, 0xA5);  // proven first: nothing written
  scratch_dir_destroy(&dir);
}

// A sharded checkpoint of a [16, 16] float32 tensor "t" in two parts of 8 rows each.
std::string WriteSharded(const std::string &dir, std::vector<uint8_t> *global) {
  *global = Bytes(16 * kRowBytes, 3);
  return WriteShardedRows(dir, "model.ckpt-1", "t", 16, kCols, 2, kChunkBytes, global);
}

// Rows [first, first + count) of "t" restored as a shard through a RestorePlan.
tw::Status RestoreShard(const std::string &path, int64_t first, int64_t count, std::vector<uint8_t> *out,
                        bool *misfit) {
  std::vector<int64_t> shape = {count, kCols};
  const tw::TensorRef variable = Ref("t", &shape, out->data());
  ckpt::ShardSpec spec{{16, kCols}, {first, 0}};
  std::unique_ptr<ckpt::RestorePlan> plan;
  TW_RETURN_IF_ERROR(ckpt::RestorePlan::Open(path, {{&variable, &spec}}, {}, nullptr, misfit, &plan));
  TW_RETURN_IF_ERROR(plan->Prove());
  return plan->Fill();
}

// Ranges of a tensor whose exponent planes are tiered- or Huffman-coded (codecs 3 and 2: planes of 64 KiB
// of small floats) read exactly their bytes, as those of zstd and raw planes.
void RangesOfCodedChunks(ckpt::TieredPlanes tiered_planes) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/huffman";
  constexpr int64_t kBigRows = 8192;  // 512 KiB: two chunks of 256 KiB
  std::vector<uint8_t> data(kBigRows * kRowBytes);
  uint32_t x = 7;
  for (size_t i = 0; i < data.size(); i += 4) {
    x = x * 1664525u + 1013904223u;
    const float f = (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 0.04f;
    std::memcpy(&data[i], &f, 4);
  }
  std::vector<int64_t> shape = {kBigRows, kCols};
  ckpt::WriteOptions options;
  options.chunk_bytes = 256 << 10;
  options.tiered_planes = tiered_planes;
  assert_true(ckpt::WriteCheckpoint(path, {Ref("t", &shape, data.data())}, options).ok());
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  for (const ckpt::Chunk &c : reader->Find("t")->chunks) {
    assert_int_equal(c.planes[3].codec,
                     tiered_planes == ckpt::TieredPlanes::kAlways ? ckpt::Codec::kTiered : ckpt::Codec::kHuffman);
  }
  const int64_t cases[][2] = {{0, kBigRows}, {1, 2}, {4000, 4200}, {4095, 4097}, {8191, 8192}};
  for (const auto &rows : cases) {
    const size_t bytes = static_cast<size_t>(rows[1] - rows[0]) * kRowBytes;
    std::vector<uint8_t> out(bytes + 1, 0xA5);
    assert_true(ReadRows(*reader, rows[0], rows[1], &out).ok());
    assert_memory_equal(out.data(), data.data() + rows[0] * kRowBytes, bytes);
    assert_int_equal(out[bytes], 0xA5);
  }
  scratch_dir_destroy(&dir);
}

void RangesOfTieredCodedChunks(void **) { RangesOfCodedChunks(ckpt::TieredPlanes::kAlways); }
void RangesOfHuffmanCodedChunks(void **) { RangesOfCodedChunks(ckpt::TieredPlanes::kNever); }

void AShardReadsOnlyThePartsHoldingItsRows(void **) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  std::vector<uint8_t> global;
  const std::string path = WriteSharded(dir.path, &global);
  std::vector<uint8_t> out(6 * kRowBytes, 0xA5);
  bool misfit = false;
  assert_true(RestoreShard(path, 5, 6, &out, &misfit).ok());  // across both parts
  assert_memory_equal(out.data(), global.data() + 5 * kRowBytes, 6 * kRowBytes);
  assert_int_equal(::unlink((path + ".part-00001-of-00002").c_str()), 0);
  std::fill(out.begin(), out.end(), 0xA5);
  assert_true(RestoreShard(path, 1, 6, &out, &misfit).ok());  // part 0 only: part 1 is never opened
  assert_memory_equal(out.data(), global.data() + 1 * kRowBytes, 6 * kRowBytes);
  std::fill(out.begin(), out.end(), 0xA5);
  const tw::Status refused = RestoreShard(path, 4, 6, &out, &misfit);
  assert_int_equal(refused.code(), TW_DATA_LOSS);
  assert_false(misfit);  // a damaged checkpoint: a restore falls back to an older one
  assert_true(ckpt::ClassifyRestoreFailure(refused, misfit) == ckpt::RestoreFailure::kDamaged);  // C20
  assert_non_null(std::strstr(refused.message().c_str(), "part-00001-of-00002"));
  for (uint8_t byte : out) assert_int_equal(byte, 0xA5);
  // Another global shape: the caller's error, naming the variable.
  std::vector<int64_t> shape = {6, kCols};
  const tw::TensorRef variable = Ref("t", &shape, out.data());
  ckpt::ShardSpec taller{{17, kCols}, {0, 0}};
  std::unique_ptr<ckpt::RestorePlan> plan;
  const tw::Status mismatch = ckpt::RestorePlan::Open(path, {{&variable, &taller}}, {}, nullptr, &misfit, &plan);
  assert_int_equal(mismatch.code(), TW_INVALID_ARGUMENT);
  assert_true(misfit);
  assert_non_null(std::strstr(mismatch.message().c_str(), "'t'"));
  scratch_dir_destroy(&dir);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(RangesReadExactlyTheirBytes),
      cmocka_unit_test(OnlyTheOverlappingChunksAreRead),
      cmocka_unit_test(RangesOfTieredCodedChunks),
      cmocka_unit_test(RangesOfHuffmanCodedChunks),
      cmocka_unit_test(AShardReadsOnlyThePartsHoldingItsRows),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
