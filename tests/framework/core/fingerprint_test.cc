// Fingerprint: stability (chunking does not matter, values are pinned) and sensitivity.
#include "framework/core/fingerprint.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/framework/data/temp_files.h"

namespace xlmr {
namespace {

uint64_t FingerprintOf(const std::string& bytes) {
  Fingerprint fingerprint;
  fingerprint.Update(bytes);
  return fingerprint.Value();
}

std::string SampleBytes(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + 7) % 251);
  return bytes;
}

TEST(FingerprintTest, ChunkingDoesNotMatter) {
  const std::string bytes = SampleBytes(103);
  const uint64_t whole = FingerprintOf(bytes);
  for (size_t split = 0; split <= bytes.size(); ++split) {
    Fingerprint pieces;
    pieces.Update(bytes.substr(0, split));
    pieces.Update(bytes.substr(split, 1));
    pieces.Update(bytes.substr(std::min(split + 1, bytes.size())));
    EXPECT_EQ(pieces.Value(), whole) << "split at " << split;
  }
}

TEST(FingerprintTest, EveryByteAndTheLengthCount) {
  const std::string bytes = SampleBytes(40);
  const uint64_t original = FingerprintOf(bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] ^= 0x01;
    EXPECT_NE(FingerprintOf(flipped), original) << "byte " << i;
  }
  EXPECT_NE(FingerprintOf(bytes + std::string(1, '\0')), original);  // zero padding is not free
  EXPECT_NE(FingerprintOf(""), FingerprintOf(std::string(1, '\0')));
}

TEST(FingerprintTest, FieldsAreLengthPrefixed) {
  Fingerprint ab_c;
  ab_c.AddString("ab");
  ab_c.AddString("c");
  Fingerprint a_bc;
  a_bc.AddString("a");
  a_bc.AddString("bc");
  EXPECT_NE(ab_c.Value(), a_bc.Value());
}

// Cache files written by earlier builds must keep matching: these values pin the algorithm
// described in fingerprint.h (they were produced by an independent Python transcription of
// that description, tests/framework/data/testdata/fingerprint_golden.py). Exact equality: it
// is integer arithmetic.
TEST(FingerprintTest, ValuesArePinned) {
  EXPECT_EQ(FingerprintOf(""), 0xdba21a06fc3e365fULL);
  EXPECT_EQ(FingerprintOf("a"), 0x0909163af326a125ULL);
  EXPECT_EQ(FingerprintOf("The quick brown fox"), 0x616f7069182d54a7ULL);
  EXPECT_EQ(FingerprintHex(0xabcULL), "0000000000000abc");
}

TEST(FingerprintTest, FileFingerprintEqualsBytesFingerprint) {
  const std::string bytes = SampleBytes(3 << 19);  // more than one 1 MiB read chunk
  const std::string path = data::testing::WriteTempFile("fingerprint.bin", bytes);
  absl::StatusOr<uint64_t> from_file = FingerprintFile(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(*from_file, FingerprintOf(bytes));
  EXPECT_FALSE(FingerprintFile(path + ".missing").ok());
}

}  // namespace
}  // namespace xlmr
