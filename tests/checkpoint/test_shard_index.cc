// The index of a sharded checkpoint (white-box): round trip, the tiling rules, part names a crafted
// index cannot bend, and corruption — every bit flip and every truncation is refused.
#include <cstring>
#include <string>
#include <vector>

#include "checkpoint/format/format.h"
#include "checkpoint/sharded/shard_index.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

const char kFile[] = "/runs/a/model.ckpt-100";

// 4 parts; "w" [8, 3] in four row slices, "b" [3] replicated in part 0, "s" a scalar in part 0; an
// origin naming a job (C19), which every bit flip test below covers.
ckpt::ShardIndex Example() {
  ckpt::ShardIndex index;
  index.origin.job = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  index.origin.name = "model.ckpt-100";
  for (uint32_t p = 0; p < 4; ++p) {
    index.parts.push_back({ckpt::PartFileName("model.ckpt-100", p, 4), 1000 + p, 0xABCD0000u + p});
  }
  ckpt::ShardedTensor w{"w", TW_FLOAT32, {8, 3}, {}};
  const int64_t rows[4][2] = {{0, 3}, {3, 1}, {4, 2}, {6, 2}};
  for (uint32_t p = 0; p < 4; ++p) w.boxes.push_back({p, {rows[p][0], 0}, {rows[p][1], 3}});
  index.tensors.push_back(w);
  index.tensors.push_back({"b", TW_BFLOAT16, {3}, {{0, {0}, {3}}}});
  index.tensors.push_back({"s", TW_INT64, {}, {{0, {}, {}}}});
  return index;
}

tw::Status Parse(const std::string &bytes, ckpt::ShardIndex *out) {
  return ckpt::ParseShardIndex(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), kFile, out);
}

void ExpectRefused(const ckpt::ShardIndex &index, const char *needle) {
  std::string bytes;
  ckpt::EncodeShardIndex(index, &bytes);
  ckpt::ShardIndex parsed;
  const tw::Status status = Parse(bytes, &parsed);
  assert_int_equal(status.code(), TW_DATA_LOSS);
  if (std::strstr(status.message().c_str(), needle) == nullptr)
    fail_msg("'%s' lacks '%s'", status.message().c_str(), needle);
}

void RoundTrip(void **) {
  std::string bytes;
  ckpt::EncodeShardIndex(Example(), &bytes);
  assert_true(ckpt::LooksLikeShardIndex(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  ckpt::ShardIndex parsed;
  assert_int_equal(Parse(bytes, &parsed).code(), TW_OK);
  assert_true(parsed.origin.job == Example().origin.job);  // C19: the index's own origin
  assert_string_equal(parsed.origin.name.c_str(), "model.ckpt-100");
  assert_int_equal(parsed.parts.size(), 4);
  assert_string_equal(parsed.parts[3].file.c_str(), "model.ckpt-100.part-00003-of-00004");
  assert_int_equal(parsed.parts[2].file_size, 1002);
  assert_int_equal(parsed.parts[1].index_xxh64, 0xABCD0001u);
  assert_int_equal(parsed.tensors.size(), 3);
  assert_string_equal(parsed.tensors[0].name.c_str(), "w");
  assert_int_equal(parsed.tensors[0].boxes.size(), 4);
  assert_int_equal(parsed.tensors[0].boxes[2].offset[0], 4);
  assert_int_equal(parsed.tensors[0].boxes[2].extent[0], 2);
  assert_int_equal(parsed.tensors[1].dtype, TW_BFLOAT16);
  assert_int_equal(parsed.tensors[2].shape.size(), 0);
  // rows [2, 5) meet the slices at 0, 3 and 4
  const auto hits = ckpt::BoxesIntersecting(parsed.tensors[0], {2, 0}, {3, 3});
  assert_int_equal(hits.size(), 3);
  assert_int_equal(hits[0]->part, 0);
  assert_int_equal(hits[2]->part, 2);
}

void AnIndexIsNotACheckpointFileNorTheOtherWayRound(void **) {
  std::string bytes;
  ckpt::EncodeShardIndex(Example(), &bytes);
  const tw::Status as_file = ckpt::ParseHeader(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), kFile);
  assert_int_equal(as_file.code(), TW_DATA_LOSS);
  assert_non_null(std::strstr(as_file.message().c_str(), "sharded checkpoint"));
  std::string plain;
  ckpt::AppendHeader(&plain);
  plain.append(64, '\0');
  assert_false(ckpt::LooksLikeShardIndex(reinterpret_cast<const uint8_t *>(plain.data()), plain.size()));
}

void NdBoxesTile(void **) {
  ckpt::ShardIndex index = Example();
  index.parts.resize(2);
  index.parts[0].file = ckpt::PartFileName("model.ckpt-100", 0, 2);
  index.parts[1].file = ckpt::PartFileName("model.ckpt-100", 1, 2);
  // a 4×4 matrix in two column halves
  index.tensors = {{"m", TW_FLOAT64, {4, 4}, {{0, {0, 0}, {4, 2}}, {1, {0, 2}, {4, 2}}}}};
  std::string bytes;
  ckpt::EncodeShardIndex(index, &bytes);
  ckpt::ShardIndex parsed;
  assert_int_equal(Parse(bytes, &parsed).code(), TW_OK);
  index.tensors[0].boxes[1].offset[1] = 1;  // overlaps the first half, leaves column 3 uncovered
  ExpectRefused(index, "boxes overlap");
}

void BadTilingsAreRefused(void **) {
  ckpt::ShardIndex gap = Example();
  gap.tensors[0].boxes[1].extent[0] = 0;
  ExpectRefused(gap, "outside the tensor");
  ckpt::ShardIndex overlap = Example();
  // the right number of rows, but row 2 twice and row 4 never
  overlap.tensors[0].boxes[1] = {1, {2, 0}, {2, 3}};
  overlap.tensors[0].boxes[2] = {2, {5, 0}, {1, 3}};
  ExpectRefused(overlap, "boxes overlap");
  ckpt::ShardIndex short_cover = Example();
  short_cover.tensors[0].boxes.pop_back();
  ExpectRefused(short_cover, "uncovered");
  ckpt::ShardIndex twice = Example();
  twice.tensors[1].boxes.push_back({1, {0}, {3}});
  ExpectRefused(twice, "more than the tensor");
  ckpt::ShardIndex outside = Example();
  outside.tensors[0].boxes[3].offset[0] = 7;
  ExpectRefused(outside, "outside the tensor in dimension 0");
  ckpt::ShardIndex no_part = Example();
  no_part.tensors[0].boxes[3].part = 4;
  ExpectRefused(no_part, "names part 4 of 4");
  ckpt::ShardIndex dup = Example();
  dup.tensors[1].name = "w";
  ExpectRefused(dup, "appears twice");
  ckpt::ShardIndex dtype = Example();
  dtype.tensors[1].dtype = 99;
  ExpectRefused(dtype, "bad dtype");
}

void PartNamesCannotPointElsewhere(void **) {
  ckpt::ShardIndex escape = Example();
  escape.parts[1].file = "../../etc/passwd";
  ExpectRefused(escape, "expected 'model.ckpt-100.part-00001-of-00004'");
  ckpt::ShardIndex swapped = Example();
  std::swap(swapped.parts[0].file, swapped.parts[1].file);
  ExpectRefused(swapped, "part 0 is named");
  ckpt::ShardIndex none = Example();
  none.parts.clear();
  none.tensors.clear();
  ExpectRefused(none, "bad part count");
}

void EveryBitFlipAndTruncationIsRefused(void **) {
  std::string bytes;
  ckpt::EncodeShardIndex(Example(), &bytes);
  ckpt::ShardIndex parsed;
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    if (Parse(flipped, &parsed).ok()) fail_msg("flipping bit %zu went unnoticed", bit);
  }
  for (size_t size = 0; size < bytes.size(); ++size) {
    if (Parse(bytes.substr(0, size), &parsed).ok()) fail_msg("a file cut to %zu bytes was accepted", size);
  }
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(RoundTrip),
      cmocka_unit_test(AnIndexIsNotACheckpointFileNorTheOtherWayRound),
      cmocka_unit_test(NdBoxesTile),
      cmocka_unit_test(BadTilingsAreRefused),
      cmocka_unit_test(PartNamesCannotPointElsewhere),
      cmocka_unit_test(EveryBitFlipAndTruncationIsRefused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
