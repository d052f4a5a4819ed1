// What the two Huffman fuzz targets share: their check and their seeds, exponent-like planes (the
// bytes the writer Huffman-codes) of sizes on both sides of the decoder's 8 KiB symbol-at-a-time limit,
// written as planes (a round-trip input) or as coded planes behind their size (a decode input).
#ifndef TRAINWATCH_TESTS_FUZZ_HUFFMAN_SEEDS_H
#define TRAINWATCH_TESTS_FUZZ_HUFFMAN_SEEDS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "checkpoint/codec/huffman.h"

inline void HuffmanCheck(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "%s\n", what);
    std::abort();
  }
}

inline void WriteHuffmanSeeds(const std::string &dir, bool coded) {
  namespace ckpt = tw::checkpoint;
  uint32_t h = 1;
  for (size_t n : {1, 2, 37, 1000, 9000, 40000}) {
    std::vector<uint8_t> plane(n);
    for (uint8_t &b : plane) {  // a float's high byte: mostly 0x3c–0x3f, either sign, a few outliers
      h = h * 1103515245u + 12345u;
      const uint32_t r = h >> 8;
      b = static_cast<uint8_t>((r & 0x80) | (r % 61 == 0 ? (r >> 9) & 0x7f : 0x3c + ((r >> 9) & 3)));
    }
    std::vector<uint8_t> seed;
    if (coded) {
      ckpt::HuffmanModel model;
      for (uint8_t b : plane) ++model.count[b];
      model.whole_plane = true;
      std::vector<uint8_t> out(2 * n + 300), work(ckpt::HuffmanWorkBytes(n));
      const size_t size = ckpt::HuffmanEncode(plane.data(), n, model, out.data(), out.size(), work.data());
      HuffmanCheck(size > 0, "a seed plane did not code");
      seed = {static_cast<uint8_t>((n - 1) & 0xff), static_cast<uint8_t>((n - 1) >> 8)};
      seed.insert(seed.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(size));
    } else {
      seed = {static_cast<uint8_t>(n % 2 ? 1 : 96)};  // whole-plane counts, or a sample of every 49th byte
      seed.insert(seed.end(), plane.begin(), plane.end());
    }
    FILE *f = std::fopen((dir + "/seed-" + std::to_string(n)).c_str(), "wb");
    if (f == nullptr) continue;
    std::fwrite(seed.data(), 1, seed.size(), f);
    std::fclose(f);
  }
}

#endif  // TRAINWATCH_TESTS_FUZZ_HUFFMAN_SEEDS_H
