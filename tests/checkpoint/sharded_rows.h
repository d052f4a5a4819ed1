// A sharded checkpoint written by hand for reader tests (docs/checkpoint-format.md, "Sharded
// checkpoints"): one float32 tensor split by rows into parts of equal rows, each part a checkpoint file,
// and the index pinning them. Include after cmocka.h, and <fstream> before it (cmocka defines fail()).
#ifndef TRAINWATCH_TESTS_SHARDED_ROWS_H
#define TRAINWATCH_TESTS_SHARDED_ROWS_H

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/tensor.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/format/format.h"
#include "checkpoint/sharded/shard_index.h"

// Tensor `name` of [rows, cols] float32 holding `global` (C order) in `parts` parts of rows / parts rows,
// written in chunks of `chunk_bytes` as <dir>/<prefix>'s parts; the index at <dir>/<prefix>, whose path
// it returns.
inline std::string WriteShardedRows(const std::string &dir, const std::string &prefix, const char *name, int64_t rows,
                                    int64_t cols, uint32_t parts, uint64_t chunk_bytes, std::vector<uint8_t> *global) {
  namespace ckpt = tw::checkpoint;
  const int64_t part_rows = rows / parts;
  const size_t part_bytes = static_cast<size_t>(part_rows * cols * 4);
  ckpt::ShardIndex index;
  ckpt::ShardedTensor tensor;
  tensor.name = name;
  tensor.dtype = TW_FLOAT32;
  tensor.shape = {rows, cols};
  for (uint32_t part = 0; part < parts; ++part) {
    const std::string file = ckpt::PartFileName(prefix, part, parts);
    std::vector<uint8_t> bytes(global->begin() + part * part_bytes, global->begin() + (part + 1) * part_bytes);
    std::vector<int64_t> shape = {part_rows, cols};
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = TW_FLOAT32;
    view.ndim = 2;
    view.shape = shape.data();
    view.data = bytes.data();
    ckpt::WriteOptions options;
    options.chunk_bytes = chunk_bytes;
    assert_true(ckpt::WriteCheckpoint(dir + "/" + file, {tw::TensorRef(view, name)}, options).ok());
    std::ifstream in(dir + "/" + file, std::ios::binary);
    const std::vector<uint8_t> written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ckpt::Footer footer;
    assert_true(
        ckpt::ParseFooter(written.data() + written.size() - ckpt::kFooterSize, written.size(), file, &footer).ok());
    index.parts.push_back({file, written.size(), footer.index_xxh64});
    tensor.boxes.push_back({part, {static_cast<int64_t>(part) * part_rows, 0}, {part_rows, cols}});
  }
  index.tensors.push_back(tensor);
  std::string encoded;
  ckpt::EncodeShardIndex(index, &encoded);
  const std::string path = dir + "/" + prefix;
  std::ofstream(path, std::ios::binary).write(encoded.data(), static_cast<std::streamsize>(encoded.size()));
  return path;
}

#endif  // TRAINWATCH_TESTS_SHARDED_ROWS_H
