// A test executable's replacement of the global operator new (failing_allocator.cc) that fails the
// k-th allocation after Arm(k) once — std::bad_alloc, or NULL from the nothrow forms — so that a test
// can walk every allocation point of an operation. It counts the whole process: every thread and
// every library linked into the executable that allocates through operator new (plans, codecs, scratch,
// threads). Not malloc (zstd's contexts) nor mmap (the reader's buffer): the C20 tests fail those.
#ifndef TRAINWATCH_TESTS_FAILING_ALLOCATOR_H
#define TRAINWATCH_TESTS_FAILING_ALLOCATOR_H

namespace failing_allocator {

void Arm(long k);  // the k-th allocation from now (k >= 1) fails, once
void Disarm();     // no failure; returns nothing
bool Fired();      // whether the armed failure happened since Arm

}  // namespace failing_allocator

#endif  // TRAINWATCH_TESTS_FAILING_ALLOCATOR_H
