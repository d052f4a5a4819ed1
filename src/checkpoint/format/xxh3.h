// XXH3-64 (xxHash 0.8, 64-bit, seed 0): the chunk checksum of checkpoint format version 2 on
// (docs/checkpoint-format.md). libxxhash's header-only build: its SSE2, AVX2 and AVX-512 loops are
// compiled into xxh3.cc with target attributes and chosen by the checkpoint kernels' Isa
// (cpu_dispatch.h), so the library needs no special compiler flags. The shared libxxhash that Debian
// ships is built for SSE2 only; on long inputs in cache the AVX2 and AVX-512 loops hash 3–4× faster
// than XXH64.
#ifndef TRAINWATCH_CHECKPOINT_XXH3_H
#define TRAINWATCH_CHECKPOINT_XXH3_H

#include <cstddef>
#include <cstdint>

#include "checkpoint/format/cpu_dispatch.h"

namespace tw {
namespace checkpoint {

// Every level gives the same hash: kPortable is the SSE2 loop on x86-64 (xxHash's portable code
// elsewhere), kAvx2 the AVX2 loop, kAvx512 and kAvx512Vbmi the AVX-512 one. `isa` must run on this CPU.
uint64_t Xxh3(const void *data, size_t size, Isa isa = Isa::kBest);

// The same hash over bytes that arrive in pieces: Update(a), Update(b) then Digest() equals
// Xxh3(a + b). Lets the writer hash a chunk in the cache-resident tiles it splits, and a reader the
// tiles it joins.
class Xxh3Stream {
 public:
  explicit Xxh3Stream(Isa isa = Isa::kBest);
  void Update(const void *data, size_t size);
  uint64_t Digest() const;

 private:
  alignas(64) unsigned char state_[576];  // an XXH3_state_t (checked in xxh3.cc), kept opaque here
  Isa isa_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_XXH3_H
