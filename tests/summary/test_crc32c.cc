// CRC-32C known answers (RFC 3720 appendix B.4, the iSCSI vectors), both implementations agreeing, and
// TFRecord's CRC masking.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "summary/crc32c.h"

// Last: cmocka.h defines macros (fail, …) that clash with the standard library, and declares its
// functions without C linkage for C++.
extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

using namespace tw::summary;

namespace {

// Runs `check` with each implementation this CPU can execute.
template <typename Check>
void ForEachImplementation(Check check) {
  check(internal::Crc32cExtendPortable);
  if (internal::HasHardwareCrc32c()) check(internal::Crc32cExtendHardware);
  check(Crc32cExtend);  // the dispatched one
}

void check_value_known_answer(void **) {
  ForEachImplementation([](uint32_t (*extend)(uint32_t, const void *, size_t)) {
    assert_int_equal(extend(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(extend(0, "", 0), 0u);
    assert_int_equal(extend(0, "a", 1), 0xC1D04330u);
  });
}

void iscsi_vectors(void **) {
  unsigned char zeros[32], ones[32], ascending[32], descending[32];
  for (int i = 0; i < 32; ++i) {
    zeros[i] = 0;
    ones[i] = 0xff;
    ascending[i] = static_cast<unsigned char>(i);
    descending[i] = static_cast<unsigned char>(31 - i);
  }
  // An iSCSI SCSI Read (10) command PDU.
  const unsigned char read_pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  ForEachImplementation([&](uint32_t (*extend)(uint32_t, const void *, size_t)) {
    assert_int_equal(extend(0, zeros, 32), 0x8A9136AAu);
    assert_int_equal(extend(0, ones, 32), 0x62A8AB43u);
    assert_int_equal(extend(0, ascending, 32), 0x46DD794Eu);
    assert_int_equal(extend(0, descending, 32), 0x113FDB5Cu);
    assert_int_equal(extend(0, read_pdu, 48), 0xD9963A56u);
  });
}

void implementations_agree_on_every_length_and_alignment(void **) {
  std::mt19937 rng(42);
  std::vector<unsigned char> data(4096 + 16);
  for (auto &b : data) b = static_cast<unsigned char>(rng());
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t size = 0; size < 300; ++size) {
      const uint32_t expected = internal::Crc32cExtendPortable(0, data.data() + offset, size);
      assert_int_equal(Crc32c(data.data() + offset, size), expected);
    }
  }
  assert_int_equal(Crc32c(data.data(), 4096), internal::Crc32cExtendPortable(0, data.data(), 4096));
}

void extend_composes(void **) {
  const char *text = "hello crc32c, split anywhere";
  const size_t n = std::strlen(text);
  const uint32_t whole = Crc32c(text, n);
  for (size_t split = 0; split <= n; ++split) {
    assert_int_equal(Crc32cExtend(Crc32c(text, split), text + split, n - split), whole);
  }
}

void mask_round_trips_and_differs(void **) {
  const uint32_t crc = Crc32c("foo", 3);
  assert_int_not_equal(MaskCrc32c(crc), crc);
  assert_int_not_equal(MaskCrc32c(MaskCrc32c(crc)), MaskCrc32c(crc));
  assert_int_equal(UnmaskCrc32c(MaskCrc32c(crc)), crc);
  assert_int_equal(UnmaskCrc32c(UnmaskCrc32c(MaskCrc32c(MaskCrc32c(crc)))), crc);
  // The definition: rotate right by 15, add 0xa282ead8.
  assert_int_equal(MaskCrc32c(0x00000000u), 0xa282ead8u);
  assert_int_equal(MaskCrc32c(0x00008000u), 0xa282ead9u);
  assert_int_equal(MaskCrc32c(0xE3069283u), ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(check_value_known_answer),
      cmocka_unit_test(iscsi_vectors),
      cmocka_unit_test(implementations_agree_on_every_length_and_alignment),
      cmocka_unit_test(extend_composes),
      cmocka_unit_test(mask_round_trips_and_differs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
