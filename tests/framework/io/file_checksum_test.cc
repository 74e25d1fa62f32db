// CRC32C: the standard check value, chaining, and files read through the mapped windows
// (a file longer than one 64 MiB window, so the window boundary is crossed).
#include "framework/io/file_checksum.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::io {
namespace {

std::string TempPath(const std::string& name) { return std::string(::testing::TempDir()) + "/" + name; }

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(Crc32cTest, StandardCheckValue) {
  // RFC 3720 / the "check" value of CRC-32C in every CRC catalogue.
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  const std::string text = "checkpoints that can be trusted";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(Crc32cExtend(Crc32c(text.data(), cut), text.data() + cut, text.size() - cut),
              Crc32c(text.data(), text.size()));
  }
}

TEST(ChecksumFileTest, MatchesTheBytesAcrossWindows) {
  std::vector<uint8_t> bytes((size_t{64} << 20) + 4099);  // one whole window and a partial one
  uint32_t x = 12345;
  for (uint8_t& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  const std::string path = TempPath("big.bin");
  WriteBytes(path, bytes);
  const absl::StatusOr<FileChecksum> sum = ChecksumFile(path);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->size, bytes.size());
  EXPECT_EQ(sum->crc32c, Crc32c(bytes.data(), bytes.size()));
  bytes.back() ^= 1;  // the last byte is covered
  WriteBytes(path, bytes);
  EXPECT_NE(ChecksumFile(path)->crc32c, sum->crc32c);
}

TEST(ChecksumFileTest, EmptyAndMissingFiles) {
  const std::string empty = TempPath("empty.bin");
  WriteBytes(empty, {});
  const absl::StatusOr<FileChecksum> sum = ChecksumFile(empty);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->size, 0u);
  EXPECT_EQ(sum->crc32c, 0u);
  const absl::StatusOr<FileChecksum> missing = ChecksumFile(TempPath("absent.bin"));
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_NE(missing.status().message().find("absent.bin"), std::string::npos);
  EXPECT_FALSE(ChecksumFile(::testing::TempDir()).ok());  // a directory
}

}  // namespace
}  // namespace xlmr::io
