// The protobuf wire format, by hand: enough to write and read TensorBoard's Event and Summary messages
// without depending on libprotobuf.
#ifndef TRAINWATCH_SUMMARY_PROTO_WIRE_H
#define TRAINWATCH_SUMMARY_PROTO_WIRE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tw {
namespace summary {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Appends fields to a string. Proto3 leaves fields at their default value out of the message; that is
// the caller's decision (fields inside a oneof are written even when zero).
class ProtoWriter {
 public:
  explicit ProtoWriter(std::string *out) : out_(out) {}

  void WriteVarint(uint32_t field, uint64_t value);                // uint64, enum, bool
  void WriteInt64(uint32_t field, int64_t value);                  // int64: ten bytes when negative
  void WriteDouble(uint32_t field, double value);                  // fixed64
  void WriteFloat(uint32_t field, float value);                    // fixed32
  void WriteBytes(uint32_t field, const void *data, size_t size);  // string, bytes, message
  void WriteString(uint32_t field, const std::string &value) { WriteBytes(field, value.data(), value.size()); }
  void WritePackedDoubles(uint32_t field, const std::vector<double> &values);  // omitted when empty

 private:
  void AppendTag(uint32_t field, WireType type);
  void AppendVarint(uint64_t value);
  void AppendFixed64(uint64_t bits);
  void AppendFixed32(uint32_t bits);

  std::string *out_;
};

// One field as read off the wire.
struct ProtoField {
  uint32_t number = 0;
  WireType wire_type = WireType::kVarint;
  uint64_t scalar = 0;             // a varint's value, or the raw bits of a fixed32 / fixed64
  const uint8_t *bytes = nullptr;  // a length-delimited payload (inside the reader's buffer)
  size_t size = 0;

  double AsDouble() const;
  float AsFloat() const;
  int64_t AsInt64() const { return static_cast<int64_t>(scalar); }
  std::string AsString() const { return std::string(reinterpret_cast<const char *>(bytes), size); }
};

// Walks the fields of one message in a borrowed buffer. Every read is bounds-checked: malformed input
// ends the walk with a TW_DATA_LOSS status, never reads outside the buffer.
//
//   ProtoReader reader(data, size);
//   ProtoField field;
//   while (reader.Next(&field)) { … }
//   TW_RETURN_IF_ERROR(reader.status());
class ProtoReader {
 public:
  ProtoReader(const void *data, size_t size) : pos_(static_cast<const uint8_t *>(data)), end_(pos_ + size) {}

  // Reads the next field; false at the end of the buffer or on malformed input (see status()).
  bool Next(ProtoField *field);
  const Status &status() const { return status_; }

 private:
  bool ReadVarint(uint64_t *value);
  bool Fail(const char *what);

  const uint8_t *pos_;
  const uint8_t *end_;
  Status status_;
};

// TW_DATA_LOSS "<message>.<field> has wire type <t>, expected <u>" unless field has `expected`.
Status ExpectWireType(const ProtoField &field, WireType expected, const char *field_name);

// Appends a repeated double field to *values: packed (one length-delimited run of fixed64) or not.
Status ReadRepeatedDouble(const ProtoField &field, const char *field_name, std::vector<double> *values);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_PROTO_WIRE_H
