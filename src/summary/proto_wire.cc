#include "summary/proto_wire.h"

#include <cstring>

namespace tw {
namespace summary {

// Fixed-width fields are little-endian on the wire.
static void AppendLittleEndian(std::string *out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

static uint64_t LoadLittleEndian(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void ProtoWriter::AppendVarint(uint64_t value) {
  while (value >= 0x80) {
    out_->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_->push_back(static_cast<char>(value));
}

void ProtoWriter::AppendTag(uint32_t field, WireType type) {
  AppendVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(type));
}

void ProtoWriter::AppendFixed64(uint64_t bits) { AppendLittleEndian(out_, bits, 8); }
void ProtoWriter::AppendFixed32(uint32_t bits) { AppendLittleEndian(out_, bits, 4); }

void ProtoWriter::WriteVarint(uint32_t field, uint64_t value) {
  AppendTag(field, WireType::kVarint);
  AppendVarint(value);
}

void ProtoWriter::WriteInt64(uint32_t field, int64_t value) { WriteVarint(field, static_cast<uint64_t>(value)); }

void ProtoWriter::WriteDouble(uint32_t field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  AppendTag(field, WireType::kFixed64);
  AppendFixed64(bits);
}

void ProtoWriter::WriteFloat(uint32_t field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  AppendTag(field, WireType::kFixed32);
  AppendFixed32(bits);
}

void ProtoWriter::WriteBytes(uint32_t field, const void *data, size_t size) {
  AppendTag(field, WireType::kLengthDelimited);
  AppendVarint(size);
  out_->append(static_cast<const char *>(data), size);
}

void ProtoWriter::WritePackedDoubles(uint32_t field, const std::vector<double> &values) {
  if (values.empty()) return;
  AppendTag(field, WireType::kLengthDelimited);
  AppendVarint(values.size() * sizeof(double));
  for (double v : values) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    AppendFixed64(bits);
  }
}

double ProtoField::AsDouble() const {
  double v;
  std::memcpy(&v, &scalar, sizeof(v));
  return v;
}

float ProtoField::AsFloat() const {
  const uint32_t bits = static_cast<uint32_t>(scalar);
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

bool ProtoReader::Fail(const char *what) {
  status_ = Status(TW_DATA_LOSS, std::string("malformed protobuf: ") + what);
  pos_ = end_;
  return false;
}

bool ProtoReader::ReadVarint(uint64_t *value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ == end_) return Fail("truncated varint");
    const uint8_t byte = *pos_++;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return Fail("varint longer than 10 bytes");
}

bool ProtoReader::Next(ProtoField *field) {
  if (pos_ == end_ || !status_.ok()) return false;
  uint64_t tag = 0;
  if (!ReadVarint(&tag)) return false;
  const uint64_t number = tag >> 3;
  if (number == 0 || number > 0x1fffffff) return Fail("field number out of range");
  field->number = static_cast<uint32_t>(number);
  field->bytes = nullptr;
  field->size = 0;
  field->scalar = 0;
  const size_t remaining = static_cast<size_t>(end_ - pos_);
  switch (tag & 7) {
    case 0: field->wire_type = WireType::kVarint; return ReadVarint(&field->scalar);
    case 1:
      if (remaining < 8) return Fail("truncated fixed64");
      field->wire_type = WireType::kFixed64;
      field->scalar = LoadLittleEndian(pos_, 8);
      pos_ += 8;
      return true;
    case 2: {
      uint64_t length = 0;
      if (!ReadVarint(&length)) return false;
      if (length > static_cast<uint64_t>(end_ - pos_)) return Fail("length-delimited field runs past the end");
      field->wire_type = WireType::kLengthDelimited;
      field->bytes = pos_;
      field->size = static_cast<size_t>(length);
      pos_ += length;
      return true;
    }
    case 5:
      if (remaining < 4) return Fail("truncated fixed32");
      field->wire_type = WireType::kFixed32;
      field->scalar = LoadLittleEndian(pos_, 4);
      pos_ += 4;
      return true;
    default:  // 3 and 4 are proto2 groups, which no message read here uses; 6 and 7 do not exist
      return Fail("unsupported wire type");
  }
}

Status ExpectWireType(const ProtoField &field, WireType expected, const char *field_name) {
  if (field.wire_type == expected) return Status();
  return Errorf(TW_DATA_LOSS, "malformed protobuf: %s has wire type %d, expected %d", field_name,
                static_cast<int>(field.wire_type), static_cast<int>(expected));
}

Status ReadRepeatedDouble(const ProtoField &field, const char *field_name, std::vector<double> *values) {
  if (field.wire_type == WireType::kFixed64) {
    values->push_back(field.AsDouble());
    return Status();
  }
  TW_RETURN_IF_ERROR(ExpectWireType(field, WireType::kLengthDelimited, field_name));
  if (field.size % sizeof(double) != 0) {
    return Errorf(TW_DATA_LOSS, "malformed protobuf: packed %s is %zu bytes, not a multiple of 8", field_name,
                  field.size);
  }
  for (size_t i = 0; i < field.size; i += sizeof(double)) {
    const uint64_t bits = LoadLittleEndian(field.bytes + i, 8);
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    values->push_back(v);
  }
  return Status();
}

}  // namespace summary
}  // namespace tw
