#include "framework/io/event_file.h"

#include <cstring>
#include <type_traits>

#include "framework/io/file_checksum.h"

namespace xlmr::io {
namespace {

// Protocol buffer wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendKey(std::string& out, uint32_t field, uint32_t wire_type) { AppendVarint(out, (field << 3) | wire_type); }

template <typename T>
void AppendLittleEndian(std::string& out, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // x86-64 and aarch64 are little endian
  out.append(bytes, sizeof(T));
}

void AppendBytesField(std::string& out, uint32_t field, const std::string& bytes) {
  AppendKey(out, field, kLengthDelimited);
  AppendVarint(out, bytes.size());
  out += bytes;
}

// Event fields 1 and 2. A step of 0 is left out, as proto3 serializers leave out default values,
// so the bytes equal TensorFlow's.
std::string EventHeader(double wall_time, int64_t step) {
  std::string event;
  AppendKey(event, 1, kFixed64);
  AppendLittleEndian(event, wall_time);
  if (step != 0) {
    AppendKey(event, 2, kVarint);
    AppendVarint(event, static_cast<uint64_t>(step));  // int64: two's complement, 10 bytes if negative
  }
  return event;
}

uint32_t MaskedCrc32c(const void* data, size_t size) {
  const uint32_t crc = Crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint64_t ReadU64(const std::string& bytes, uint64_t at) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof(value));
  return value;
}

uint32_t ReadU32(const std::string& bytes, uint64_t at) {
  uint32_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof(value));
  return value;
}

}  // namespace

std::string EncodeFileVersionEvent(double wall_time) {
  std::string event = EventHeader(wall_time, 0);
  AppendBytesField(event, 3, "brain.Event:2");
  return event;
}

std::string EncodeScalarsEvent(double wall_time, int64_t step, const std::vector<ScalarValue>& scalars) {
  std::string summary;
  for (const ScalarValue& scalar : scalars) {
    std::string value;
    AppendBytesField(value, 1, scalar.tag);
    AppendKey(value, 2, kFixed32);
    AppendLittleEndian(value, scalar.value);
    AppendBytesField(summary, 1, value);
  }
  std::string event = EventHeader(wall_time, step);
  AppendBytesField(event, 5, summary);
  return event;
}

std::string FrameRecord(const std::string& payload) {
  std::string record;
  AppendLittleEndian(record, static_cast<uint64_t>(payload.size()));
  AppendLittleEndian(record, MaskedCrc32c(record.data(), sizeof(uint64_t)));
  record += payload;
  AppendLittleEndian(record, MaskedCrc32c(payload.data(), payload.size()));
  return record;
}

std::vector<uint64_t> IntactRecordEnds(const std::string& bytes) {
  std::vector<uint64_t> ends;
  constexpr uint64_t kHeader = sizeof(uint64_t) + sizeof(uint32_t);
  constexpr uint64_t kFooter = sizeof(uint32_t);
  uint64_t at = 0;
  while (bytes.size() - at >= kHeader) {
    const uint64_t length = ReadU64(bytes, at);
    if (ReadU32(bytes, at + sizeof(uint64_t)) != MaskedCrc32c(bytes.data() + at, sizeof(uint64_t))) break;
    if (length > bytes.size() - at - kHeader || bytes.size() - at - kHeader - length < kFooter) break;
    const uint64_t payload = at + kHeader;
    if (ReadU32(bytes, payload + length) != MaskedCrc32c(bytes.data() + payload, length)) break;
    at = payload + length + kFooter;
    ends.push_back(at);
  }
  return ends;
}

}  // namespace xlmr::io
