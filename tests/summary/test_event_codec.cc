// Protobuf encoding of Event/Summary checked byte by byte against hand-computed messages, decoding
// round trips, malformed input, TFRecord framing bytes, and TF's histogram (buckets, dtypes, strides).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/tensor.h"
#include "numerics/tensor_values.h"
#include "summary/crc32c.h"
#include "summary/event.h"
#include "summary/histogram.h"
#include "summary/proto_wire.h"
#include "summary/record_writer.h"

// Last: cmocka.h defines macros (fail, …) that clash with the standard library, and declares its
// functions without C linkage for C++.
extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

using namespace tw::summary;
using tw::numerics::ElementAsDouble;
using tw::numerics::VisitAsDoubles;

namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

void AssertBytesEqual(const std::string &actual, const std::string &expected) {
  assert_int_equal(actual.size(), expected.size());
  assert_memory_equal(actual.data(), expected.data(), expected.size());
}

Event ScalarEvent(double wall_time, int64_t step, const std::string &tag, float value) {
  Event e;
  e.wall_time = wall_time;
  e.step = step;
  e.what = Event::What::kSummary;
  e.summary.resize(1);
  e.summary[0].tag = tag;
  e.summary[0].kind = SummaryValue::Kind::kSimpleValue;
  e.summary[0].simple_value = value;
  return e;
}

void scalar_event_bytes_match_hand_encoding(void **) {
  std::string encoded;
  EncodeEvent(ScalarEvent(1.5, 3, "loss", 0.25f), &encoded);
  const std::string expected =
      Bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f})  // wall_time = 1 (fixed64): 1.5 = 0x3FF8000000000000
      + Bytes({0x10, 0x03})                        // step = 2 (varint): 3
      + Bytes({0x2a, 0x0d})                        // summary = 5, 13 bytes
      + Bytes({0x0a, 0x0b})                        //   value = 1, 11 bytes
      + Bytes({0x0a, 0x04}) + "loss"               //     tag = 1
      + Bytes({0x15, 0, 0, 0x80, 0x3e});           //     simple_value = 2 (fixed32): 0.25f = 0x3E800000
  AssertBytesEqual(encoded, expected);
}

void proto3_defaults_are_omitted_but_oneof_members_kept(void **) {
  std::string encoded;
  EncodeEvent(ScalarEvent(0.0, 0, "z", 0.0f), &encoded);  // wall_time and step 0: omitted
  AssertBytesEqual(encoded, Bytes({0x2a, 0x0a, 0x0a, 0x08, 0x0a, 0x01, 'z', 0x15, 0, 0, 0, 0}));
}

void negative_step_is_ten_byte_varint(void **) {
  std::string encoded;
  Event e;
  e.step = -1;
  EncodeEvent(e, &encoded);
  AssertBytesEqual(encoded, Bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

void file_version_and_session_log_bytes(void **) {
  Event version;
  version.what = Event::What::kFileVersion;
  version.file_version = kFileVersion;
  std::string encoded;
  EncodeEvent(version, &encoded);
  AssertBytesEqual(encoded, Bytes({0x1a, 0x0d}) + "brain.Event:2");

  Event checkpoint;
  checkpoint.step = 200;  // varint 0xc8 0x01
  checkpoint.what = Event::What::kSessionLog;
  checkpoint.session_log.status = SessionStatus::kCheckpoint;
  checkpoint.session_log.checkpoint_path = "/c/model.ckpt";
  encoded.clear();
  EncodeEvent(checkpoint, &encoded);
  AssertBytesEqual(encoded, Bytes({0x10, 0xc8, 0x01, 0x3a, 0x11, 0x08, 0x03, 0x12, 0x0d}) + "/c/model.ckpt");
}

void histogram_bytes_use_packed_doubles(void **) {
  Event e;
  e.what = Event::What::kSummary;
  e.summary.resize(1);
  SummaryValue &v = e.summary[0];
  v.tag = "h";
  v.kind = SummaryValue::Kind::kHistogram;
  v.histogram.min = 1.0;  // 0x3FF0000000000000
  v.histogram.num = 1.0;
  v.histogram.bucket_limit = {2.0};  // 0x4000000000000000
  v.histogram.bucket = {1.0};
  std::string encoded;
  EncodeEvent(e, &encoded);
  const std::string histo = Bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})           // min = 1
                            + Bytes({0x19, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})         // num = 3
                            + Bytes({0x32, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x40})      // bucket_limit = 6, packed
                            + Bytes({0x3a, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f});  // bucket = 7, packed
  const std::string value = Bytes({0x0a, 0x01, 'h', 0x2a, static_cast<int>(histo.size())}) + histo;
  const std::string expected =
      Bytes({0x2a, static_cast<int>(value.size() + 2), 0x0a, static_cast<int>(value.size())}) + value;
  AssertBytesEqual(encoded, expected);
}

void record_framing_bytes(void **) {
  std::string framed;
  AppendRecord("abc", 3, &framed);
  // crc32c(le64(3)) = 0x576c35e3 and crc32c("abc") = 0x364b3fb7, each masked.
  std::string expected = Bytes({3, 0, 0, 0, 0, 0, 0, 0});
  const uint32_t length_crc = MaskCrc32c(0x576c35e3u), data_crc = MaskCrc32c(0x364b3fb7u);
  for (int i = 0; i < 4; ++i) expected.push_back(static_cast<char>(length_crc >> (8 * i)));
  expected += "abc";
  for (int i = 0; i < 4; ++i) expected.push_back(static_cast<char>(data_crc >> (8 * i)));
  AssertBytesEqual(framed, expected);
}

void decode_round_trips_every_kind(void **) {
  std::vector<Event> events(4);
  events[0] = ScalarEvent(1700000000.25, 42, "a/b", -3.5f);
  events[0].summary.push_back(events[0].summary[0]);
  events[0].summary[1].tag = "second";
  events[1].what = Event::What::kSessionLog;
  events[1].session_log.status = SessionStatus::kStart;
  events[1].session_log.msg = "hello";
  events[2].what = Event::What::kLogMessage;
  events[2].log_message.level = 30;
  events[2].log_message.message = "warned";
  events[3].what = Event::What::kSummary;
  events[3].step = INT64_MIN;
  events[3].summary.resize(1);
  events[3].summary[0].tag = "h";
  events[3].summary[0].kind = SummaryValue::Kind::kHistogram;
  Histogram h;
  for (double x : {-1.0, 0.0, 2.5, 1e6}) h.Add(x);
  events[3].summary[0].histogram = h.ToData();

  for (const Event &original : events) {
    std::string encoded;
    EncodeEvent(original, &encoded);
    Event decoded;
    assert_true(DecodeEvent(encoded.data(), encoded.size(), &decoded).ok());
    assert_true(decoded.what == original.what);
    assert_true(decoded.wall_time == original.wall_time);
    assert_int_equal(decoded.step, original.step);
    assert_int_equal(decoded.summary.size(), original.summary.size());
    for (size_t i = 0; i < original.summary.size(); ++i) {
      const SummaryValue &a = original.summary[i], &b = decoded.summary[i];
      assert_string_equal(a.tag.c_str(), b.tag.c_str());
      assert_true(a.kind == b.kind);
      assert_true(a.simple_value == b.simple_value);
      assert_true(a.histogram.bucket == b.histogram.bucket);
      assert_true(a.histogram.bucket_limit == b.histogram.bucket_limit);
      assert_true(a.histogram.sum_squares == b.histogram.sum_squares);
      assert_true(a.histogram.min == b.histogram.min);
    }
    assert_true(decoded.session_log.status == original.session_log.status);
    assert_string_equal(decoded.session_log.msg.c_str(), original.session_log.msg.c_str());
    assert_int_equal(decoded.log_message.level, original.log_message.level);
    assert_string_equal(decoded.log_message.message.c_str(), original.log_message.message.c_str());
  }
}

void decoder_accepts_unpacked_repeated_and_unknown_fields(void **) {
  // Summary { value { tag "u" histo { bucket_limit: 1.0 (unpacked) bucket: 2.0 (unpacked) field 99 } } }
  std::string histo = Bytes({0x31, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x39, 0, 0, 0, 0, 0, 0, 0, 0x40}) +
                      Bytes({0x98, 0x06, 0x07});  // field 99 varint 7: skipped
  std::string value = Bytes({0x0a, 0x01, 'u', 0x2a, static_cast<int>(histo.size())}) + histo;
  std::string event = Bytes({0x2a, static_cast<int>(value.size() + 2), 0x0a, static_cast<int>(value.size())}) + value;
  Event decoded;
  assert_true(DecodeEvent(event.data(), event.size(), &decoded).ok());
  assert_int_equal(decoded.summary.size(), 1);
  assert_true(decoded.summary[0].histogram.bucket_limit == std::vector<double>{1.0});
  assert_true(decoded.summary[0].histogram.bucket == std::vector<double>{2.0});
}

void malformed_protobuf_is_data_loss(void **) {
  const std::string cases[] = {
      Bytes({0x10}),                                                                    // truncated varint
      Bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),  // 11-byte varint
      Bytes({0x09, 0, 0}),                                                              // truncated fixed64
      Bytes({0x2a, 0x05, 0x0a}),                                                        // length past the end
      Bytes({0x0b}),                                                                    // wire type 3 (group)
      Bytes({0x00, 0x00}),                                                              // field number 0
      Bytes({0x08, 0x01}),                                                              // wall_time as a varint
      Bytes({0x2a, 0x03, 0x0a, 0x01, 0x15}),                                            // value truncated inside
      Bytes({0x2a, 0x07, 0x0a, 0x05, 0x2a, 0x03, 0x32, 0x01, 0x00}),  // packed doubles not a multiple of 8
  };
  for (const std::string &bytes : cases) {
    Event decoded;
    const tw::Status status = DecodeEvent(bytes.data(), bytes.size(), &decoded);
    assert_int_equal(status.code(), TW_DATA_LOSS);
    assert_non_null(std::strstr(status.message().c_str(), "malformed protobuf"));
  }
}

void decoder_survives_random_and_mutated_bytes(void **) {
  std::mt19937 rng(7);
  Event e = ScalarEvent(12.0, 5, "loss", 1.0f);
  e.summary.push_back(e.summary[0]);
  e.summary[1].kind = SummaryValue::Kind::kHistogram;
  e.summary[1].histogram = Histogram().ToData();
  std::string valid;
  EncodeEvent(e, &valid);
  for (int round = 0; round < 20000; ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes.resize(rng() % 64);
      for (char &c : bytes) c = static_cast<char>(rng());
    } else {
      bytes = valid.substr(0, rng() % (valid.size() + 1));
      if (!bytes.empty()) bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
    }
    Event decoded;
    const tw::Status status = DecodeEvent(bytes.data(), bytes.size(), &decoded);
    assert_true(status.ok() || status.code() == TW_DATA_LOSS);
  }
}

void default_bucket_limits_are_tfs(void **) {
  const std::vector<double> &limits = DefaultBucketLimits();
  assert_int_equal(limits.size(), 1551);  // 775 negative, 0, 775 positive
  assert_true(limits.front() == -DBL_MAX);
  assert_true(limits.back() == DBL_MAX);
  assert_true(limits[775] == 0.0);
  assert_true(limits[776] == 1e-12);
  for (size_t i = 1; i < limits.size(); ++i) assert_true(limits[i - 1] < limits[i]);
  for (size_t i = 0; i < limits.size(); ++i) assert_true(limits[i] == -limits[limits.size() - 1 - i]);
  assert_true(limits[1549] < 1e20 && limits[1549] * 1.1 >= 1e20);  // the last finite edge
}

void histogram_counts_and_merges_empty_buckets(void **) {
  Histogram h;
  h.Add(0.5);
  const HistogramData d = h.ToData();
  assert_true(d.min == 0.5 && d.max == 0.5 && d.num == 1 && d.sum == 0.5 && d.sum_squares == 0.25);
  assert_int_equal(d.bucket.size(), 3);  // empty run, the 0.5 bucket, empty run
  assert_true(d.bucket == (std::vector<double>{0, 1, 0}));
  assert_true(d.bucket_limit[0] <= 0.5 && 0.5 < d.bucket_limit[1]);
  assert_true(d.bucket_limit[1] / 1.1 <= 0.5);  // the bucket is one 10% step wide
  assert_true(d.bucket_limit[2] == DBL_MAX);

  const HistogramData empty = Histogram().ToData();  // TF's empty histogram
  assert_true(empty.min == DBL_MAX && empty.max == -DBL_MAX && empty.num == 0);
  assert_true(empty.bucket_limit == std::vector<double>{DBL_MAX});
  assert_true(empty.bucket == std::vector<double>{0});

  Histogram edges;  // a value equal to a limit belongs to the bucket above it (upper_bound)
  edges.Add(0.0);
  edges.Add(DBL_MAX);
  edges.Add(-DBL_MAX);
  const HistogramData e = edges.ToData();
  double total = 0;
  for (double c : e.bucket) total += c;
  assert_true(total == 3);
  assert_true(e.bucket_limit.back() == DBL_MAX && e.bucket.back() == 1);
}

void histogram_of_every_float_dtype(void **) {
  struct Case {
    int32_t dtype;
    std::vector<uint8_t> bytes;
    double min, max, sum;
  };
  const Case cases[] = {
      // f16: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal)
      {TW_FLOAT16, {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00}, -2.0, 65504.0, 65503.0 + std::ldexp(1.0, -24)},
      // bf16: 1.0, -3.0
      {TW_BFLOAT16, {0x80, 0x3f, 0x40, 0xc0}, -3.0, 1.0, -2.0},
      // e4m3fn: 1.0 (0x38), 448 (0x7e, max), -2^-9 (0x81, smallest subnormal)
      {TW_FLOAT8_E4M3FN, {0x38, 0x7e, 0x81}, -std::ldexp(1.0, -9), 448.0, 449.0 - std::ldexp(1.0, -9)},
      // e5m2: 1.0 (0x3c), 57344 (0x7b, max), -0.5 (0xb8)
      {TW_FLOAT8_E5M2, {0x3c, 0x7b, 0xb8}, -0.5, 57344.0, 57344.5},
  };
  for (const Case &c : cases) {
    std::vector<uint8_t> data = c.bytes;
    const int64_t count = static_cast<int64_t>(data.size() / tw::DtypeSize(c.dtype));
    tw_tensor t = TW_TENSOR_INIT;
    t.dtype = c.dtype;
    t.data = data.data();
    t.ndim = 1;
    t.shape = &count;
    HistogramData d;
    assert_true(HistogramOfTensor(t, "x", &d).ok());
    assert_true(d.num == static_cast<double>(count));
    assert_true(d.min == c.min);
    assert_true(d.max == c.max);
    assert_true(d.sum == c.sum);
  }
}

void float16_and_e5m2_decode_exhaustively(void **) {
#if defined(__FLT16_MAX__)
  for (uint32_t bits = 0; bits < 65536; ++bits) {  // against the compiler's own _Float16
    const uint16_t b = static_cast<uint16_t>(bits);
    _Float16 reference;
    std::memcpy(&reference, &b, sizeof(b));
    const double ours = ElementAsDouble(TW_FLOAT16, &b);
    if (std::isnan(static_cast<double>(reference))) {
      assert_true(std::isnan(ours));
    } else {
      assert_true(ours == static_cast<double>(reference));
      assert_true(std::signbit(ours) == std::signbit(static_cast<double>(reference)));
    }
  }
#endif
  for (uint32_t bits = 0; bits < 256; ++bits) {  // e5m2 is the top byte of an f16
    const uint8_t e5m2 = static_cast<uint8_t>(bits);
    const uint16_t f16 = static_cast<uint16_t>(bits << 8);
    const double a = ElementAsDouble(TW_FLOAT8_E5M2, &e5m2), b = ElementAsDouble(TW_FLOAT16, &f16);
    assert_true((std::isnan(a) && std::isnan(b)) || a == b);
  }
  int e4m3_nans = 0;
  for (uint32_t bits = 0; bits < 256; ++bits) {
    const uint8_t b = static_cast<uint8_t>(bits);
    const double v = ElementAsDouble(TW_FLOAT8_E4M3FN, &b);
    assert_false(std::isinf(v));  // e4m3fn has no infinities
    if (std::isnan(v)) ++e4m3_nans;
  }
  assert_int_equal(e4m3_nans, 2);  // 0x7f and 0xff
}

void non_finite_values_are_tfs_error(void **) {
  const float f32[3] = {1.0f, NAN, 2.0f};
  const uint16_t f16_inf = 0x7c00;
  const uint8_t e4m3_nan = 0x7f;
  const int64_t three = 3;
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.data = const_cast<float *>(f32);
  t.ndim = 1;
  t.shape = &three;
  HistogramData d;
  d.num = 123;
  tw::Status status = HistogramOfTensor(t, "weights", &d);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_string_equal(status.message().c_str(), "Nan in summary histogram for: weights");
  assert_true(d.num == 123);  // untouched
  t.ndim = 0;                 // scalars
  t.dtype = TW_FLOAT16;
  t.data = const_cast<uint16_t *>(&f16_inf);
  assert_int_equal(HistogramOfTensor(t, "w", &d).code(), TW_INVALID_ARGUMENT);
  t.dtype = TW_FLOAT8_E4M3FN;
  t.data = const_cast<uint8_t *>(&e4m3_nan);
  assert_int_equal(HistogramOfTensor(t, "w", &d).code(), TW_INVALID_ARGUMENT);
}

void strided_views_visit_every_element_in_order(void **) {
  // A 2x3 row-major int32 matrix viewed transposed (3x2, strides {1, 3}) and reversed (stride -1).
  const int32_t m[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {3, 2}, strides[2] = {1, 3};
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_INT32;
  t.data = const_cast<int32_t *>(m);
  t.ndim = 2;
  t.shape = shape;
  t.strides = strides;
  std::vector<double> seen;
  VisitAsDoubles(t, [&](const double *v, size_t n) { seen.insert(seen.end(), v, v + n); });
  assert_true(seen == (std::vector<double>{0, 3, 1, 4, 2, 5}));

  const int64_t six = 6, back = -1;
  t.data = const_cast<int32_t *>(m + 5);
  t.ndim = 1;
  t.shape = &six;
  t.strides = &back;
  seen.clear();
  VisitAsDoubles(t, [&](const double *v, size_t n) { seen.insert(seen.end(), v, v + n); });
  assert_true(seen == (std::vector<double>{5, 4, 3, 2, 1, 0}));

  std::vector<float> big(5000);  // more than one chunk
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  const int64_t n = static_cast<int64_t>(big.size());
  t.dtype = TW_FLOAT32;
  t.data = big.data();
  t.shape = &n;
  t.strides = nullptr;
  HistogramData d;
  assert_true(HistogramOfTensor(t, "big", &d).ok());
  assert_true(d.num == 5000 && d.sum == 4999.0 * 5000.0 / 2 && d.min == 0 && d.max == 4999);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scalar_event_bytes_match_hand_encoding),
      cmocka_unit_test(proto3_defaults_are_omitted_but_oneof_members_kept),
      cmocka_unit_test(negative_step_is_ten_byte_varint),
      cmocka_unit_test(file_version_and_session_log_bytes),
      cmocka_unit_test(histogram_bytes_use_packed_doubles),
      cmocka_unit_test(record_framing_bytes),
      cmocka_unit_test(decode_round_trips_every_kind),
      cmocka_unit_test(decoder_accepts_unpacked_repeated_and_unknown_fields),
      cmocka_unit_test(malformed_protobuf_is_data_loss),
      cmocka_unit_test(decoder_survives_random_and_mutated_bytes),
      cmocka_unit_test(default_bucket_limits_are_tfs),
      cmocka_unit_test(histogram_counts_and_merges_empty_buckets),
      cmocka_unit_test(histogram_of_every_float_dtype),
      cmocka_unit_test(float16_and_e5m2_decode_exhaustively),
      cmocka_unit_test(non_finite_values_are_tfs_error),
      cmocka_unit_test(strided_views_visit_every_element_in_order),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
