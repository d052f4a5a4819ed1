// All-or-nothing restore against crafted files (C2, C21): checkpoints whose every checksum
// matches — rewritten with the format's own helpers — but whose second tensor (or second chunk) cannot
// be restored: an undecodable zstd frame, a frame of the wrong size, a raw checksum that the decoded
// bytes do not match, a wrong shape or dtype, a missing tensor. Restore and load_variable must fail with
// TW_DATA_LOSS / TW_INVALID_ARGUMENT / TW_NOT_FOUND and leave every variable byte-identical (C2's
// restore in place, never half of it).
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/format/checksum.h"
#include "checkpoint/format/format.h"
#include "checkpoint/open_checkpoint.h"
#include "checkpoint/saver.h"
#include "restore_model.h"
#include "scratch_dir.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

std::vector<uint8_t> ReadFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Parses the checkpoint at `path`, lets `craft` change chunk bytes (in `file`) and index fields, then
// makes every checksum but the raw ones match again: each chunk's stored_checksum is recomputed from
// its bytes, the index re-encoded and the footer's index checksum recomputed.
void Craft(const std::string &path,
           const std::function<void(std::vector<ckpt::TensorEntry> *, std::vector<uint8_t> *file)> &craft) {
  std::vector<uint8_t> file = ReadFile(path);
  ckpt::Footer footer;
  assert_true(ckpt::ParseFooter(file.data() + file.size() - ckpt::kFooterSize, file.size(), path, &footer).ok());
  std::vector<ckpt::TensorEntry> tensors;
  ckpt::Origin origin;
  assert_true(
      ckpt::ParseIndex(file.data() + footer.index_offset, footer, path, &tensors, ckpt::kFormatVersion, &origin).ok());
  craft(&tensors, &file);
  for (ckpt::TensorEntry &t : tensors) {
    for (ckpt::Chunk &c : t.chunks)
      c.stored_checksum = ckpt::StoredChecksum(ckpt::ChunkHash::kXxh3, file.data() + c.offset, c);
  }
  std::string tail;
  ckpt::AppendIndex(origin, tensors, &tail);
  assert_int_equal(tail.size(), footer.index_size);  // same fields, same sizes
  footer.index_xxh64 = ckpt::Xxh64(tail.data(), tail.size(), ckpt::IndexChecksumSeed(ckpt::kFormatVersion));
  ckpt::AppendFooter(footer, &tail);
  file.resize(footer.index_offset);
  file.insert(file.end(), tail.begin(), tail.end());
  WriteFile(path, file);
  // The crafted file passes every structural check and every stored checksum.
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
}

ckpt::TensorEntry &Named(std::vector<ckpt::TensorEntry> *tensors, const std::string &name) {
  for (ckpt::TensorEntry &t : *tensors) {
    if (t.name == name) return t;
  }
  fail_msg("no tensor '%s'", name.c_str());
  std::abort();
}

// The first zstd plane of `chunk`: its offset in the file and stored size.
std::pair<uint64_t, uint64_t> FirstZstdPlane(const ckpt::Chunk &chunk) {
  uint64_t at = chunk.offset;
  for (int p = 0; p < chunk.plane_count; ++p) {
    if (chunk.planes[p].codec == ckpt::Codec::kZstd) return {at, chunk.planes[p].stored_size};
    at += chunk.planes[p].stored_size;
  }
  fail_msg("the chunk has no zstd plane");
  std::abort();
}

// Variables "a" (saved first) and "b" (restore_model.h), small: b spans four chunks of 1 KiB.
struct Model : RestoreModel {
  Model() : RestoreModel(256, 32) {}
};

struct Fixture {
  scratch_dir dir;
  Model model;
  std::unique_ptr<ckpt::Saver> saver;

  Fixture() {
    assert_int_equal(scratch_dir_create(&dir), 0);
    ckpt::SaverOptions options;
    options.write.chunk_bytes = 1024;  // b: four chunks
    assert_true(ckpt::Saver::Create(model.refs(), options, &saver).ok());
  }
  ~Fixture() { scratch_dir_destroy(&dir); }

  std::string Save() {
    model.Fill(1);
    std::string path;
    assert_true(saver->Save(std::string(dir.path) + "/model.ckpt", 1, &path).ok());
    model.Fill(7);  // what training made of the variables since
    return path;
  }

  // Restores `path` with 1 and with 2 threads: fails with `code` and the message part `why`, and every
  // variable byte is as before.
  void ExpectRestoreChangesNothing(const std::string &path, tw_status code, const char *why) {
    for (int threads : {1, 2}) {
      ckpt::SaverOptions options = saver->options();
      options.write.threads = threads;
      assert_true(saver->SetOptions(options).ok());
      const std::vector<uint8_t> before = model.Bytes();
      const tw::Status status = saver->Restore(path);
      assert_int_equal(status.code(), code);
      if (std::strstr(status.message().c_str(), why) == nullptr) fail_msg("%s", status.message().c_str());
      assert_true(model.Bytes() == before);
    }
  }
};

}  // namespace

static void undecodable_frame_in_the_second_tensor(void **state) {
  (void)state;
  Fixture f;
  const std::string path = f.Save();
  Craft(path, [](std::vector<ckpt::TensorEntry> *tensors, std::vector<uint8_t> *file) {
    const auto plane = FirstZstdPlane(Named(tensors, "b").chunks.back());
    for (uint64_t i = plane.first + 6; i < plane.first + plane.second; ++i) (*file)[i] ^= 0x5a;  // past the header
  });
  f.ExpectRestoreChangesNothing(path, TW_DATA_LOSS, "tensor 'b' chunk 3 of 4");
}

static void frame_of_the_wrong_size_in_the_second_tensor(void **state) {
  (void)state;
  Fixture f;
  const std::string path = f.Save();
  // A valid frame whose header announces one byte more than its plane holds: the frame content size
  // field (RFC 8878 3.1.1.1) sits after the magic, the descriptor, the window byte and the dictionary ID.
  Craft(path, [](std::vector<ckpt::TensorEntry> *tensors, std::vector<uint8_t> *file) {
    const auto plane = FirstZstdPlane(Named(tensors, "b").chunks[1]);
    uint8_t *frame = file->data() + plane.first;
    const uint8_t descriptor = frame[4];
    const bool single_segment = (descriptor >> 5) & 1;
    const int dict_id_bytes[4] = {0, 1, 2, 4}, size_bytes[4] = {single_segment ? 1 : 0, 2, 4, 8};
    const int field = 5 + (single_segment ? 0 : 1) + dict_id_bytes[descriptor & 3];
    const int width = size_bytes[descriptor >> 6];
    assert_true(width > 0);  // the writer always records the content size
    for (int k = 0; k < width && ++frame[field + k] == 0; ++k) {
    }  // little-endian +1
  });
  f.ExpectRestoreChangesNothing(path, TW_DATA_LOSS, "tensor 'b' chunk 1 of 4: zstd frame of plane");
}

static void raw_checksum_mismatch_in_the_second_tensor(void **state) {
  (void)state;
  Fixture f;
  const std::string path = f.Save();
  Craft(path, [](std::vector<ckpt::TensorEntry> *tensors, std::vector<uint8_t> *file) {
    (void)file;
    Named(tensors, "b").chunks[2].raw_checksum ^= 1;  // frames decode; the bytes are not the ones saved
  });
  f.ExpectRestoreChangesNothing(path, TW_DATA_LOSS, "tensor 'b' chunk 2 of 4: checksum mismatch after decoding");
}

static void raw_plane_bytes_changed_in_the_second_tensor(void **state) {
  (void)state;
  Fixture f;
  const std::string path = f.Save();
  Craft(path, [](std::vector<ckpt::TensorEntry> *tensors, std::vector<uint8_t> *file) {
    const ckpt::Chunk &chunk = Named(tensors, "b").chunks[3];
    assert_true(chunk.planes[0].codec == ckpt::Codec::kRaw);  // the low mantissa bytes
    (*file)[chunk.offset] ^= 1;
  });
  f.ExpectRestoreChangesNothing(path, TW_DATA_LOSS, "tensor 'b' chunk 3 of 4: checksum mismatch after decoding");
}

// A file written by the project's own writer whose "b" differs from the saver's variable.
static void second_tensor_of_wrong_shape_dtype_or_missing(void **state) {
  (void)state;
  Fixture f;
  const std::string path = std::string(f.dir.path) + "/other.ckpt";
  std::vector<tw::TensorRef> refs = f.model.refs();
  std::vector<int32_t> ints(1024, 3);
  int64_t wrong_shape[2] = {16, 64};
  tw_tensor b = TW_TENSOR_INIT;
  b.dtype = TW_FLOAT32, b.ndim = 2, b.shape = wrong_shape, b.data = f.model.b.data();
  f.model.Fill(1);
  assert_true(ckpt::WriteCheckpoint(path, {refs[0], tw::TensorRef(b, "b")}).ok());
  f.model.Fill(7);
  f.ExpectRestoreChangesNothing(path, TW_INVALID_ARGUMENT, "variable 'b' is float32[32,32] but checkpoint");

  b.dtype = TW_INT32, b.shape = f.model.b_shape, b.data = ints.data();
  assert_true(ckpt::WriteCheckpoint(path, {refs[0], tw::TensorRef(b, "b")}).ok());
  f.ExpectRestoreChangesNothing(path, TW_INVALID_ARGUMENT, "holds int32[32,32]");

  assert_true(ckpt::WriteCheckpoint(path, {refs[0]}).ok());
  f.ExpectRestoreChangesNothing(path, TW_NOT_FOUND, "Key b not found in checkpoint");
}

// load_variable of one multi-chunk tensor whose last chunk does not decode: the buffer is untouched.
static void load_variable_is_all_or_nothing_across_chunks(void **state) {
  (void)state;
  Fixture f;
  const std::string path = f.Save();
  Craft(path, [](std::vector<ckpt::TensorEntry> *tensors, std::vector<uint8_t> *file) {
    (void)file;
    Named(tensors, "b").chunks.back().raw_checksum ^= 1;
  });
  const std::vector<uint8_t> before = f.model.Bytes();
  const tw::Status status = ckpt::LoadVariable(path, f.model.refs()[1]);
  assert_int_equal(status.code(), TW_DATA_LOSS);
  assert_true(f.model.Bytes() == before);
  // Verify reports the same chunk.
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  const tw::Status verified = reader->Verify(1);
  assert_int_equal(verified.code(), TW_DATA_LOSS);
  assert_non_null(std::strstr(verified.message().c_str(), "tensor 'b' chunk 3 of 4"));
}

// The untouched file still restores, through both passes.
static void an_intact_file_restores_every_byte(void **state) {
  (void)state;
  Fixture f;
  const std::string path = f.Save();
  assert_true(f.saver->Restore(path).ok());
  Model expected;
  expected.Fill(1);
  assert_true(f.model.Bytes() == expected.Bytes());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(undecodable_frame_in_the_second_tensor),
      cmocka_unit_test(frame_of_the_wrong_size_in_the_second_tensor),
      cmocka_unit_test(raw_checksum_mismatch_in_the_second_tensor),
      cmocka_unit_test(raw_plane_bytes_changed_in_the_second_tensor),
      cmocka_unit_test(second_tensor_of_wrong_shape_dtype_or_missing),
      cmocka_unit_test(load_variable_is_all_or_nothing_across_chunks),
      cmocka_unit_test(an_intact_file_restores_every_byte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
