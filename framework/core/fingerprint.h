// A stable 64-bit fingerprint of bytes, for cache keys and cache checksums.
//
// Not cryptographic: it detects accidental change (an edited data file, another tokenizer, a
// flipped or truncated cache byte), not tampering. Stable means: the same bytes give the same
// value on every run, build and machine, whatever the chunking of Update calls, so a value
// written into a cache file today still matches tomorrow. (std::hash and absl::Hash promise
// neither, which is why this exists; no new dependency is needed for 40 lines.)
//
// Algorithm (fixed; changing it invalidates every cache, so bump the cache format version):
// the input is consumed as 64-bit little-endian words, state = rotl64((state ^ word) * P, 31)
// with P the FNV-1a 64 prime, starting from the FNV-1a 64 offset basis; the 0..7 tail bytes
// form one last zero-padded word; then the total byte count is mixed in and the state goes
// through the SplitMix64 finaliser. Each step is a bijection of the state for a fixed word, so
// inputs of equal length that differ in exactly one word always give different values.
//
// Example:
//   Fingerprint fingerprint;
//   fingerprint.AddString("text");        // length-prefixed: ("ab","c") != ("a","bc")
//   fingerprint.AddInt(max_length);
//   uint64_t key = fingerprint.Value();
#ifndef XLMR_FRAMEWORK_CORE_FINGERPRINT_H_
#define XLMR_FRAMEWORK_CORE_FINGERPRINT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr {

class Fingerprint {
 public:
  // Appends raw bytes. Update("ab"); Update("c") equals Update("abc").
  void Update(const void* data, size_t size);
  void Update(absl::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // Appends the length (8 bytes) and then the bytes, so that field boundaries count.
  void AddString(absl::string_view text);
  // Appends the value as 8 little-endian bytes.
  void AddInt(int64_t value);

  // The fingerprint of everything appended so far (the object stays usable).
  uint64_t Value() const;

 private:
  void MixWord(uint64_t word);

  uint64_t state_ = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  uint64_t total_bytes_ = 0;
  unsigned char pending_[8] = {};  // bytes of an incomplete word
  size_t pending_size_ = 0;
};

// The fingerprint of a whole file's bytes (read in chunks). Error if it cannot be read.
absl::StatusOr<uint64_t> FingerprintFile(const std::string& path);

// 16 lowercase hex digits, e.g. for file names.
std::string FingerprintHex(uint64_t value);

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_CORE_FINGERPRINT_H_
