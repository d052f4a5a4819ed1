#include "failing_allocator.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace failing_allocator {
namespace {

std::atomic<long> countdown{0};  // > 0: allocations left before the failing one
std::atomic<bool> fired{false};

// Whether this allocation is the one to fail.
bool FailNow() {
  long left = countdown.load(std::memory_order_relaxed);
  while (left > 0) {
    if (countdown.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
      if (left == 1) {
        fired.store(true);
        return true;
      }
      return false;
    }
  }
  return false;
}

void *Allocate(std::size_t size, std::size_t alignment) {
  if (FailNow()) return nullptr;
  if (size == 0) size = 1;
  if (alignment <= alignof(max_align_t)) return std::malloc(size);
  void *p = nullptr;
  return ::posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}

}  // namespace

void Arm(long k) {
  fired.store(false);
  countdown.store(k);
}
void Disarm() { countdown.store(0); }
bool Fired() { return fired.load(); }

}  // namespace failing_allocator

using failing_allocator::Allocate;

void *operator new(std::size_t size) {
  if (void *p = Allocate(size, 0)) return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t size) { return ::operator new(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return Allocate(size, 0); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return Allocate(size, 0); }
void *operator new(std::size_t size, std::align_val_t a) {
  if (void *p = Allocate(size, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t size, std::align_val_t a) { return ::operator new(size, a); }
void *operator new(std::size_t size, std::align_val_t a, const std::nothrow_t &) noexcept {
  return Allocate(size, static_cast<std::size_t>(a));
}
void *operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t &) noexcept {
  return Allocate(size, static_cast<std::size_t>(a));
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
