// The exponent-plane coders side by side: Huffman (codec 2, huffman.h) and the tiered code (codec 3,
// tiered.h) against zstd as the writer configures it for planes (codec.cc), zstd's entropy stage alone
// ("zstd lit": Huffman-coded literals of raw-literals blocks, the match finder as blind as zstd allows;
// the Huffman/zstd line is ours over theirs) and memcpy (the anchor: the
// plane's bytes copied, the least a decoder can take), on the planes the writer gives to Huffman coding — the exponent
// planes of the model-like state (model_state.h) cut into 4 MiB chunks. CPU time of one thread
// (CLOCK_THREAD_CPUTIME_ID, best of several passes), so a loaded machine inflates the figures less.
//
// usage: bench_plane_codec [MiB]   (default 256: the float32 state; bfloat16 has the same elements)
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_literalCompressionMode, as codec.cc
#include <zstd.h>

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/codec/codec.h"
#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/plane_choice.h"
#include "checkpoint/codec/tiered.h"
#include "model_state.h"

namespace ckpt = tw::checkpoint;

namespace {

constexpr int kPasses = 5;

double ThreadCpuSeconds() {
  timespec t;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double BestCpu(const std::function<void()> &pass) {
  double best = 1e30;
  for (int i = 0; i < kPasses; ++i) {
    const double start = ThreadCpuSeconds();
    pass();
    best = std::min(best, ThreadCpuSeconds() - start);
  }
  return best;
}

// The planes of `vars` in 4 MiB chunks that ChoosePlaneCodec gives to Huffman coding.
std::vector<std::vector<uint8_t>> HuffmanPlanes(const std::vector<Variable> &vars, size_t element) {
  std::vector<std::vector<uint8_t>> planes;
  ckpt::HuffmanModel model;
  const size_t chunk = ckpt::kDefaultChunkBytes / element;  // elements
  std::vector<uint8_t> split(ckpt::kDefaultChunkBytes);
  for (const Variable &v : vars) {
    const size_t count = v.bytes.size() / element;
    for (size_t at = 0; at < count; at += chunk) {
      const size_t n = std::min(chunk, count - at);
      ckpt::SplitBytePlanes(v.bytes.data() + at * element, n, element, split.data());
      for (size_t k = 0; k < element; ++k) {
        const uint8_t *plane = split.data() + k * n;
        if (ckpt::ChoosePlaneCodec(plane, n, ckpt::Filter::kBytePlanes, &model, nullptr) ==
            ckpt::PlaneChoice::kHuffman) {
          planes.emplace_back(plane, plane + n);
        }
      }
    }
  }
  return planes;
}

struct ZstdFigures {
  double encode = 0, decode = 0;  // seconds of one thread's CPU, best of kPasses
  size_t bytes = 0;
};

// Every plane compressed with `cctx` into its own frame (one byte less room than the plane: a plane that
// does not shrink is an error), then decompressed into `out` and checked.
ZstdFigures RunZstd(ZSTD_CCtx *cctx, const std::vector<std::vector<uint8_t>> &planes, uint8_t *out) {
  ZstdFigures f;
  std::vector<std::vector<uint8_t>> frames(planes.size());
  for (size_t i = 0; i < planes.size(); ++i) frames[i].resize(planes[i].size());
  f.encode = BestCpu([&] {
    f.bytes = 0;
    for (size_t i = 0; i < planes.size(); ++i) {
      const size_t n = ZSTD_compress2(cctx, frames[i].data(), planes[i].size() - 1, planes[i].data(), planes[i].size());
      if (ZSTD_isError(n)) std::abort();
      frames[i].resize(n);
      f.bytes += n;
    }
  });
  ZSTD_DCtx *dctx = ZSTD_createDCtx();
  f.decode = BestCpu([&] {
    for (size_t i = 0; i < planes.size(); ++i) {
      if (ZSTD_decompressDCtx(dctx, out, planes[i].size(), frames[i].data(), frames[i].size()) != planes[i].size()) {
        std::abort();
      }
    }
  });
  for (size_t i = 0; i < planes.size(); ++i) {  // the output checked once, outside the timing
    ZSTD_decompressDCtx(dctx, out, planes[i].size(), frames[i].data(), frames[i].size());
    if (std::memcmp(out, planes[i].data(), planes[i].size()) != 0) std::abort();
  }
  ZSTD_freeDCtx(dctx);
  return f;
}

void Bench(const char *label, int32_t dtype, size_t bytes) {
  const size_t element = dtype == TW_FLOAT32 ? 4 : 2;
  const std::vector<std::vector<uint8_t>> planes = HuffmanPlanes(ModelState(bytes, dtype), element);
  size_t plane_bytes = 0, largest = 0;
  for (const auto &p : planes) plane_bytes += p.size(), largest = std::max(largest, p.size());
  std::vector<std::vector<uint8_t>> huffman(planes.size());
  std::vector<uint8_t> out(largest);

  // The writer's zstd settings for byte planes (codec.cc, NewCompressor).
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, 6);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, 7);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetLength, 256);
  // zstd's entropy stage alone, as far as its parameters go: every byte a Huffman-coded literal of a
  // raw-literals block (ZSTD_c_literalCompressionMode), the match finder as blind as it can be made —
  // strategy fast, 7-byte minimum matches, the smallest hash table and the largest acceleration
  // (targetLength, for the fast strategy: positions skipped when nothing matches). The window stays
  // level 1's: a block is at most the window, and each block carries its own Huffman table.
  ZSTD_CCtx *literals_cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(literals_cctx, ZSTD_c_strategy, ZSTD_fast);
  ZSTD_CCtx_setParameter(literals_cctx, ZSTD_c_minMatch, ZSTD_MINMATCH_MAX);
  ZSTD_CCtx_setParameter(literals_cctx, ZSTD_c_hashLog, ZSTD_HASHLOG_MIN);
  ZSTD_CCtx_setParameter(literals_cctx, ZSTD_c_targetLength, ZSTD_TARGETLENGTH_MAX);
  ZSTD_CCtx_setParameter(literals_cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable);  // ZSTD_lcm_huffman

  size_t huffman_bytes = 0;
  // The writer samples every plane to choose its codec; the Huffman coder then builds its code from
  // that sample. The sampling is timed on its own, once per plane, and not counted in either coder.
  std::vector<ckpt::HuffmanModel> models(planes.size());
  const double choose = BestCpu([&] {
    for (size_t i = 0; i < planes.size(); ++i) {
      if (ckpt::ChoosePlaneCodec(planes[i].data(), planes[i].size(), ckpt::Filter::kBytePlanes, &models[i], nullptr) !=
          ckpt::PlaneChoice::kHuffman) {
        std::abort();
      }
    }
  });
  std::vector<uint8_t> work(ckpt::HuffmanWorkBytes(largest));
  // Into buffers sized beforehand, as the writer's: only the encoder is timed.
  for (size_t i = 0; i < planes.size(); ++i) huffman[i].resize(planes[i].size());
  std::vector<size_t> coded(planes.size());
  const auto encode_with = [&](ckpt::Isa isa) {
    return BestCpu([&] {
      for (size_t i = 0; i < planes.size(); ++i) {
        coded[i] = ckpt::HuffmanEncode(planes[i].data(), planes[i].size(), models[i], huffman[i].data(),
                                       planes[i].size() - 1, work.data(), isa);
        if (coded[i] == 0) std::abort();
      }
    });
  };
  // Every encoder loop this CPU runs (they write the same bytes), then the one the writer uses.
  std::string loops;
  for (const auto &[isa, name] : {std::pair{ckpt::Isa::kPortable, "portable"}, std::pair{ckpt::Isa::kAvx2, "bmi2"},
                                  std::pair{ckpt::Isa::kAvx512Vbmi, "avx512"}}) {
    if (!ckpt::IsaRuns(isa)) continue;
    char line[64];
    std::snprintf(line, sizeof line, "  %s %.1f ms", name, encode_with(isa) * 1e3);
    loops += line;
  }
  const double huffman_encode = encode_with(ckpt::Isa::kBest);
  for (size_t i = 0; i < planes.size(); ++i) huffman[i].resize(coded[i]), huffman_bytes += coded[i];
  const double huffman_decode = BestCpu([&] {
    for (size_t i = 0; i < planes.size(); ++i) {
      if (!ckpt::HuffmanDecode(huffman[i].data(), huffman[i].size(), out.data(), planes[i].size()).ok()) std::abort();
    }
  });
  const ZstdFigures zstd = RunZstd(cctx, planes, out.data());
  const ZstdFigures literals = RunZstd(literals_cctx, planes, out.data());
  for (size_t i = 0; i < planes.size(); ++i) {  // the decoders' output checked once, outside the timing
    if (!ckpt::HuffmanDecode(huffman[i].data(), huffman[i].size(), out.data(), planes[i].size()).ok() ||
        std::memcmp(out.data(), planes[i].data(), planes[i].size()) != 0) {
      std::fprintf(stderr, "Huffman round trip failed\n");
      std::exit(1);
    }
  }
  // The tiered code, from the same sample's counts (a byte value the sample missed is a raw byte).
  std::vector<ckpt::TieredCode> codes(planes.size());
  const double tiered_choose = BestCpu([&] {
    for (size_t i = 0; i < planes.size(); ++i) codes[i] = ckpt::ChooseTieredCode(models[i].count);
  });
  std::map<std::string, int> widths;  // how often each choice of widths was made
  for (const ckpt::TieredCode &code : codes) {
    std::string w;
    for (int t = 0; t < code.tiers; ++t) w += (t ? "," : "") + std::to_string(code.width[t]);
    ++widths["(" + w + ")"];
  }
  std::vector<std::vector<uint8_t>> tiered(planes.size());
  for (size_t i = 0; i < planes.size(); ++i) tiered[i].resize(planes[i].size());
  std::vector<uint8_t> tiered_work(ckpt::TieredWorkBytes(largest) + 1);
  const auto tiered_encode_with = [&](ckpt::Isa isa) {
    return BestCpu([&] {
      for (size_t i = 0; i < planes.size(); ++i) {
        coded[i] = ckpt::TieredEncode(planes[i].data(), planes[i].size(), codes[i], tiered[i].data(),
                                      planes[i].size() - 1, tiered_work.data(), isa);
        if (coded[i] == 0) std::abort();
      }
    });
  };
  const double tiered_portable_encode = tiered_encode_with(ckpt::Isa::kPortable);
  const double tiered_encode = tiered_encode_with(ckpt::Isa::kBest);
  size_t tiered_bytes = 0;
  for (size_t i = 0; i < planes.size(); ++i) tiered[i].resize(coded[i]), tiered_bytes += coded[i];
  const auto tiered_decode_with = [&](ckpt::Isa isa) {
    return BestCpu([&] {
      for (size_t i = 0; i < planes.size(); ++i) {
        if (!ckpt::TieredDecode(tiered[i].data(), tiered[i].size(), out.data(), planes[i].size(), isa).ok())
          std::abort();
      }
    });
  };
  const double tiered_portable_decode = tiered_decode_with(ckpt::Isa::kPortable);
  const double tiered_decode = tiered_decode_with(ckpt::Isa::kBest);
  for (size_t i = 0; i < planes.size(); ++i) {
    if (!ckpt::TieredDecode(tiered[i].data(), tiered[i].size(), out.data(), planes[i].size()).ok() ||
        std::memcmp(out.data(), planes[i].data(), planes[i].size()) != 0) {
      std::fprintf(stderr, "tiered round trip failed\n");
      std::exit(1);
    }
  }
  // The anchor: the planes copied into the decoders' output buffer.
  const double copy = BestCpu([&] {
    for (size_t i = 0; i < planes.size(); ++i) std::memcpy(out.data(), planes[i].data(), planes[i].size());
  });
  ZSTD_freeCCtx(cctx);
  ZSTD_freeCCtx(literals_cctx);

  const double gb = static_cast<double>(plane_bytes) / 1e9;
  std::printf("%s: %zu exponent planes, %.1f MiB (plane choice from the sample: %.2f ms CPU)\n", label, planes.size(),
              static_cast<double>(plane_bytes) / (1 << 20), choose * 1e3);
  std::printf("  Huffman  encode %5.2f GB/s (%6.1f ms)  decode %5.2f GB/s (%6.1f ms)  coded/plane %.4f\n",
              gb / huffman_encode, huffman_encode * 1e3, gb / huffman_decode, huffman_decode * 1e3,
              static_cast<double>(huffman_bytes) / static_cast<double>(plane_bytes));
  std::printf("  Huffman encode by loop:%s\n", loops.c_str());
  for (const auto &[name, z] : {std::pair{"zstd    ", zstd}, std::pair{"zstd lit", literals}}) {
    std::printf("  %s encode %5.2f GB/s (%6.1f ms)  decode %5.2f GB/s (%6.1f ms)  coded/plane %.4f\n", name,
                gb / z.encode, z.encode * 1e3, gb / z.decode, z.decode * 1e3,
                static_cast<double>(z.bytes) / static_cast<double>(plane_bytes));
  }
  // Ours over theirs: throughput ratios > 1 and a size ratio < 1 are Huffman's margin.
  std::printf("  Huffman/zstd's entropy stage (zstd lit): encode %.2fx  decode %.2fx  size %.4f\n",
              literals.encode / huffman_encode, literals.decode / huffman_decode,
              static_cast<double>(huffman_bytes) / static_cast<double>(literals.bytes));
  std::printf(
      "  tiered   encode %5.2f GB/s (%6.1f ms)  decode %5.2f GB/s (%6.1f ms)  coded/plane %.4f (%.3f of Huffman's)\n",
      gb / tiered_encode, tiered_encode * 1e3, gb / tiered_decode, tiered_decode * 1e3,
      static_cast<double>(tiered_bytes) / static_cast<double>(plane_bytes),
      static_cast<double>(tiered_bytes) / static_cast<double>(huffman_bytes));
  std::string chosen;
  for (const auto &[w, n] : widths) chosen += "  " + w + " ×" + std::to_string(n);
  std::printf("  tiered portable loops: encode %5.2f GB/s  decode %5.2f GB/s; code choice %.2f ms; widths:%s\n",
              gb / tiered_portable_encode, gb / tiered_portable_decode, tiered_choose * 1e3, chosen.c_str());
  std::printf(
      "  memcpy   %5.2f GB/s (%6.1f ms)  decode ratios: tiered/memcpy %.2f, Huffman/memcpy %.2f, tiered/Huffman %.2f\n",
      gb / copy, copy * 1e3, copy / tiered_decode, copy / huffman_decode, huffman_decode / tiered_decode);
}

}  // namespace

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  double load[3];
  if (::getloadavg(load, 3) == 3)
    std::printf("load average %.2f; one thread's CPU time, best of %d\n", load[0], kPasses);
  Bench("float32", TW_FLOAT32, mib << 20);
  Bench("bfloat16", TW_BFLOAT16, (mib << 20) / 2);
  return 0;
}
