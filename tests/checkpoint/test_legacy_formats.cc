// The formats before 1.0 (docs/checkpoint-format.md, "Versioning"). With legacy formats (the default
// build) the checked-in files of versions 1 to 5 upgrade to one file of the current format, every tensor
// bit for bit; without them (-Dlegacy_formats=false) each is refused with TW_UNIMPLEMENTED naming its
// version and the conversion command, and the current format still reads. Each build compiles the
// cases of its own configuration.
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/format/format.h"
#include "checkpoint/open_checkpoint.h"
#include "checkpoint/upgrade.h"
#include "scratch_dir.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

std::string Fixture(uint32_t version) {
  return std::string(TW_CHECKPOINT_TEST_DATA) + "/v" + std::to_string(version) + ".ckpt";
}

bool Exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

#if TW_LEGACY_FORMATS

namespace {

std::vector<uint8_t> ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

uint32_t VersionOf(const std::vector<uint8_t> &file) {
  uint32_t version = 0;
  if (file.size() >= 12) std::memcpy(&version, file.data() + 8, 4);
  return version;
}

// Every tensor of `reader`, in its order, read whole.
std::vector<std::vector<uint8_t>> Contents(const ckpt::CheckpointReader &reader) {
  std::vector<std::vector<uint8_t>> contents;
  for (const ckpt::TensorEntry &t : reader.tensors()) {
    contents.emplace_back(t.byte_size(), 0xA5);
    assert_true(reader.ReadInto({{&t, contents.back().data()}}).ok());
  }
  return contents;
}

}  // namespace

// Each checked-in file of versions 1 to 5 becomes a version-6 file holding the same tensors (names,
// dtypes, shapes, order) with the same bytes, intact, recording no job; the source is not touched.
static void every_file_before_1_0_upgrades_bit_exact(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  for (uint32_t version = 1; version < ckpt::kFormatVersion; ++version) {
    const std::string from = Fixture(version), to = std::string(dir.path) + "/upgraded-v" + std::to_string(version);
    const std::vector<uint8_t> before = ReadAll(from);
    assert_int_equal(VersionOf(before), version);
    const tw::Status upgraded = ckpt::UpgradeCheckpoint(from, to);
    if (!upgraded.ok()) fail_msg("v%u: %s", version, upgraded.message().c_str());
    assert_true(ReadAll(from) == before);
    assert_int_equal(VersionOf(ReadAll(to)), ckpt::kFormatVersion);

    std::unique_ptr<ckpt::CheckpointReader> old_reader, new_reader;
    assert_true(ckpt::CheckpointReader::Open(from, &old_reader).ok());
    assert_true(ckpt::CheckpointReader::Open(to, &new_reader).ok());
    assert_true(new_reader->Verify().ok());
    assert_true(ckpt::IsNoJob(new_reader->origin().job));
    assert_int_equal(new_reader->tensors().size(), old_reader->tensors().size());
    assert_true(old_reader->tensors().size() >= 2);
    for (size_t i = 0; i < old_reader->tensors().size(); ++i) {
      const ckpt::TensorEntry &a = old_reader->tensors()[i], &b = new_reader->tensors()[i];
      assert_string_equal(a.name.c_str(), b.name.c_str());
      assert_int_equal(a.dtype, b.dtype);
      assert_true(a.shape == b.shape);
    }
    assert_true(Contents(*old_reader) == Contents(*new_reader));
  }
  scratch_dir_destroy(&dir);
}

// Upgrading onto the source itself would replace it before a failure could leave it: refused, the
// file unchanged. A corrupt source is TW_DATA_LOSS and leaves no new file.
static void an_upgrade_never_damages_its_source_nor_writes_a_bad_file(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string copy = std::string(dir.path) + "/v5", to = std::string(dir.path) + "/new";
  std::vector<uint8_t> bytes = ReadAll(Fixture(5));
  std::ofstream(copy, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const tw::Status same = ckpt::UpgradeCheckpoint(copy, copy);
  assert_int_equal(same.code(), TW_INVALID_ARGUMENT);
  assert_non_null(std::strstr(same.message().c_str(), "is the same file"));
  assert_true(ReadAll(copy) == bytes);

  bytes[ckpt::kHeaderSize + 7] ^= 0x10;  // a stored byte of the first chunk
  std::ofstream(copy, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const tw::Status corrupt = ckpt::UpgradeCheckpoint(copy, to);
  assert_int_equal(corrupt.code(), TW_DATA_LOSS);
  assert_false(Exists(to));
  scratch_dir_destroy(&dir);
}

#else  // !TW_LEGACY_FORMATS

// Every reader refuses a file of versions 1 to 5 with TW_UNIMPLEMENTED (the file is not damaged: a
// restore does not skip it for an older one, restore_failure.h) naming the file, its version and the
// command that converts it; the upgrade itself refuses it alike and writes nothing.
static void files_before_1_0_are_refused_naming_their_version_and_the_upgrade(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string to = std::string(dir.path) + "/new";
  for (uint32_t version = 1; version < ckpt::kFormatVersion; ++version) {
    const std::string from = Fixture(version);
    std::unique_ptr<ckpt::CheckpointReader> reader;
    std::vector<ckpt::TensorEntry> listed;
    const tw::Status statuses[] = {ckpt::CheckpointReader::Open(from, &reader), ckpt::ListVariables(from, &listed),
                                   ckpt::VerifyCheckpoint(from), ckpt::UpgradeCheckpoint(from, to)};
    for (const tw::Status &status : statuses) {
      assert_int_equal(status.code(), TW_UNIMPLEMENTED);
      const std::string &message = status.message();
      assert_non_null(std::strstr(message.c_str(), ("format version " + std::to_string(version) + ",").c_str()));
      assert_non_null(std::strstr(message.c_str(), ("`trainwatch-ckpt upgrade " + from + " NEW`").c_str()));
      assert_non_null(std::strstr(message.c_str(), "legacy_formats"));
    }
    assert_false(Exists(to));
  }
  scratch_dir_destroy(&dir);
}

// The current format reads as ever.
static void the_current_format_still_reads(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/model.ckpt-1";
  std::vector<float> weights = {1.5f, -2.25f, 3.0f, 0.0f};
  const int64_t shape[] = {2, 2};
  tw_tensor view = TW_TENSOR_INIT;
  view.dtype = TW_FLOAT32;
  view.ndim = 2;
  view.shape = shape;
  view.data = weights.data();
  assert_true(ckpt::WriteCheckpoint(path, {tw::TensorRef(view, "w")}).ok());
  std::vector<float> restored(4, 0.0f);
  view.data = restored.data();
  assert_true(ckpt::LoadVariable(path, tw::TensorRef(view, "w")).ok());
  assert_true(restored == weights);
  scratch_dir_destroy(&dir);
}

#endif  // TW_LEGACY_FORMATS

int main(void) {
  const struct CMUnitTest tests[] = {
#if TW_LEGACY_FORMATS
    cmocka_unit_test(every_file_before_1_0_upgrades_bit_exact),
    cmocka_unit_test(an_upgrade_never_damages_its_source_nor_writes_a_bad_file),
#else
    cmocka_unit_test(files_before_1_0_are_refused_naming_their_version_and_the_upgrade),
    cmocka_unit_test(the_current_format_still_reads),
#endif
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
