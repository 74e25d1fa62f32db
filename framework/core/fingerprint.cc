#include "framework/core/fingerprint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace xlmr {
namespace {

constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

uint64_t LoadLittleEndian64(const unsigned char* bytes) {
  uint64_t word = 0;
  for (int i = 7; i >= 0; --i) word = (word << 8) | bytes[i];
  return word;
}

uint64_t RotateLeft(uint64_t value, int bits) { return (value << bits) | (value >> (64 - bits)); }

// The SplitMix64 finaliser: spreads every input bit over the whole output.
uint64_t Finalize(uint64_t value) {
  value ^= value >> 30;
  value *= 0xbf58476d1ce4e5b9ULL;
  value ^= value >> 27;
  value *= 0x94d049bb133111ebULL;
  value ^= value >> 31;
  return value;
}

}  // namespace

void Fingerprint::MixWord(uint64_t word) { state_ = RotateLeft((state_ ^ word) * kFnvPrime, 31); }

void Fingerprint::Update(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  total_bytes_ += size;
  while (size > 0 && pending_size_ > 0) {  // complete a word begun by an earlier call
    pending_[pending_size_++] = *bytes++;
    --size;
    if (pending_size_ == 8) {
      MixWord(LoadLittleEndian64(pending_));
      pending_size_ = 0;
    }
  }
  for (; size >= 8; size -= 8, bytes += 8) MixWord(LoadLittleEndian64(bytes));
  for (; size > 0; --size) pending_[pending_size_++] = *bytes++;
}

void Fingerprint::AddString(absl::string_view text) {
  AddInt(static_cast<int64_t>(text.size()));
  Update(text);
}

void Fingerprint::AddInt(int64_t value) {
  unsigned char bytes[8];
  const auto bits = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(bits >> (8 * i));
  Update(bytes, sizeof(bytes));
}

uint64_t Fingerprint::Value() const {
  Fingerprint copy = *this;
  if (copy.pending_size_ > 0) {
    std::memset(copy.pending_ + copy.pending_size_, 0, 8 - copy.pending_size_);
    copy.MixWord(LoadLittleEndian64(copy.pending_));
  }
  copy.MixWord(copy.total_bytes_);
  return Finalize(copy.state_);
}

absl::StatusOr<uint64_t> FingerprintFile(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open file (", std::strerror(errno), ")"));
  }
  Fingerprint fingerprint;
  std::vector<char> chunk(1 << 20);
  size_t got;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file.get())) > 0) {
    fingerprint.Update(chunk.data(), got);
  }
  if (std::ferror(file.get())) {
    return absl::DataLossError(absl::StrCat(path, ": read error (", std::strerror(errno), ")"));
  }
  return fingerprint.Value();
}

std::string FingerprintHex(uint64_t value) { return absl::StrFormat("%016x", value); }

}  // namespace xlmr
