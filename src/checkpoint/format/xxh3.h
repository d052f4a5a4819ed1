// XXH3-64 (xxHash 0.8, 64-bit, seed 0): the chunk checksum of checkpoint format version 2
// (docs/checkpoint-format.md). libxxhash's header-only build: its SSE2, AVX2 and AVX-512 loops are
// compiled into xxh3.cc with target attributes and the widest one the CPU runs is chosen once, so
// the library needs no special compiler flags. On long inputs in cache it hashes 3–4× faster than XXH64.
#ifndef TRAINWATCH_CHECKPOINT_XXH3_H
#define TRAINWATCH_CHECKPOINT_XXH3_H

#include <cstddef>
#include <cstdint>

namespace tw {
namespace checkpoint {

// Which loop hashes long inputs. Every loop gives the same hash; kBest is the widest this CPU runs.
// Outside x86-64 every value means xxHash's portable code.
enum class Xxh3Loop { kBest, kSse2, kAvx2, kAvx512 };
bool Xxh3LoopRuns(Xxh3Loop loop);         // whether this CPU runs it (for tests of every loop)
const char *Xxh3LoopName(Xxh3Loop loop);  // kBest: the name of the loop it chose

// `loop` must run on this CPU.
uint64_t Xxh3(const void *data, size_t size, Xxh3Loop loop = Xxh3Loop::kBest);

// The same hash over bytes that arrive in pieces: Update(a), Update(b) then Digest() equals
// Xxh3(a + b). Lets the writer hash a chunk in the cache-resident tiles it splits, and a reader the
// tiles it joins.
class Xxh3Stream {
 public:
  explicit Xxh3Stream(Xxh3Loop loop = Xxh3Loop::kBest);
  void Update(const void *data, size_t size);
  uint64_t Digest() const;

 private:
  alignas(64) unsigned char state_[576];  // an XXH3_state_t (checked in xxh3.cc), kept opaque here
  Xxh3Loop loop_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_XXH3_H
