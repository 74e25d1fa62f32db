// The safetensors reader against malformed files: every rule of the reference reader gives an
// error (never a crash) whose one-line message names the file and the problem. Also checks
// that what the reference accepts is accepted. Files are built byte by byte here.
#include <cstdint>
#include <fstream>
#include <string>

#include "framework/io/safetensors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string LittleEndian64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  return bytes;
}

// A file whose length field is header.size(): length, header, data.
std::string FileBytes(const std::string& header, const std::string& data) {
  return LittleEndian64(header.size()) + header + data;
}

// A valid one-tensor file: F32 [2] "w" with 8 data bytes.
const char kValidHeader[] = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
const std::string kEightBytes("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

absl::Status ReadBytes(const std::string& bytes) {
  return ReadSafetensors(WriteTemp("malformed.safetensors", bytes)).status();
}

// Reads `bytes` and expects an InvalidArgument error on one line naming the file and `problem`.
void ExpectRejected(const std::string& bytes, const std::string& problem) {
  const std::string path = WriteTemp("malformed.safetensors", bytes);
  const absl::Status status = ReadSafetensors(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr(path + ": "));
  EXPECT_THAT(message, HasSubstr(problem));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

void ExpectHeaderRejected(const std::string& header, const std::string& data,
                          const std::string& problem) {
  ExpectRejected(FileBytes(header, data), problem);
}

TEST(SafetensorsMalformedTest, ValidBaselineIsAccepted) {
  // The cases below each change one thing of this file.
  EXPECT_TRUE(ReadBytes(FileBytes(kValidHeader, kEightBytes)).ok());
}

TEST(SafetensorsMalformedTest, FileShorterThanTheLengthField) {
  ExpectRejected("", "file is 0 bytes, too small for the 8-byte header length");
  ExpectRejected(std::string("\x10\0\0", 3), "file is 3 bytes, too small");
}

TEST(SafetensorsMalformedTest, FileCutInsideTheData) {
  ExpectRejected(FileBytes(kValidHeader, kEightBytes.substr(0, 5)),
                 "file is truncated: the header indexes 8 data bytes but only 5 follow it");
}

TEST(SafetensorsMalformedTest, HeaderLengthAboveTheLimit) {
  ExpectRejected(LittleEndian64(100'000'001) + "{}",
                 "header length 100000001 is larger than the limit of 100000000 bytes");
  ExpectRejected(LittleEndian64(~uint64_t{0}) + "{}", "is larger than the limit");
}

TEST(SafetensorsMalformedTest, HeaderLengthBeyondTheFile) {
  ExpectRejected(LittleEndian64(64) + "{}", "header length 64 goes past the end of the file");
}

TEST(SafetensorsMalformedTest, HeaderNotUtf8) {
  // A stray continuation byte, an overlong '/', a surrogate, a code point above U+10FFFF and
  // a sequence cut by the end of the header: all rejected by Rust's str::from_utf8.
  for (const std::string bad :
       {"\x80", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":")" + bad,
                         kEightBytes, "header is not valid UTF-8 (byte 59 of the header");
  }
}

TEST(SafetensorsMalformedTest, HeaderNotJson) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})", kEightBytes,
                       "header is not valid JSON");
  // nlohmann alone would stop at the NUL and skip the byte-order mark.
  ExpectHeaderRejected(std::string("{}\0\0\0\0\0\0", 8), "",
                       "header is not valid JSON: NUL byte at byte 2 of the header");
  ExpectHeaderRejected("\xEF\xBB\xBF{}  ", "",
                       "header is not valid JSON: it starts with a byte-order");
}

TEST(SafetensorsMalformedTest, HeaderNotAnObject) {
  ExpectHeaderRejected("[1, 2]", "", "header is a JSON array, expected an object");
  ExpectHeaderRejected(R"("w")", "", "header is a JSON string, expected an object");
}

TEST(SafetensorsMalformedTest, EntryMissingAField) {
  ExpectHeaderRejected(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", kEightBytes,
                       "missing field 'dtype' (tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", kEightBytes,
                       "missing field 'shape' (tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2]}})", kEightBytes,
                       "missing field 'data_offsets' (tensor 'w')");
}

TEST(SafetensorsMalformedTest, EntryOrFieldOfTheWrongJsonType) {
  ExpectHeaderRejected(R"({"w":[0,8]})", kEightBytes, "entry is [0,8], expected an object");
  ExpectHeaderRejected(R"({"w":{"dtype":32,"shape":[2],"data_offsets":[0,8]}})", kEightBytes,
                       "field 'dtype' is 32, expected a string (tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", kEightBytes,
                       "field 'shape' is 2, expected an array of non-negative integers");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}})", kEightBytes,
                       "field 'data_offsets' is [0,8,8], expected [begin, end]");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", kEightBytes,
                       "field 'data_offsets' is [-8,0]");
}

TEST(SafetensorsMalformedTest, UnknownDtype) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", kEightBytes,
                       "unknown dtype 'F33' (tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}})", kEightBytes,
                       "unknown dtype 'f32'");  // names are case-sensitive, as in serde
}

TEST(SafetensorsMalformedTest, ShapeEntryNegativeOrNotAnInteger) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", kEightBytes,
                       "shape entry 0 is -2, expected a non-negative integer (tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[1,2.0],"data_offsets":[0,8]}})", kEightBytes,
                       "shape entry 1 is 2.0, expected a non-negative integer");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", kEightBytes,
                       R"(shape entry 0 is "2")");
}

TEST(SafetensorsMalformedTest, OverlappingOffsets) {
  ExpectHeaderRejected(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                       std::string(12, '\0'),
                       "data_offsets [4, 12] overlap the previous tensor, which ends at 8 "
                       "(tensor 'b')");
}

TEST(SafetensorsMalformedTest, GapBetweenTensors) {
  ExpectHeaderRejected(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                       std::string(20, '\0'),
                       "data_offsets [12, 20] leave a gap of 4 bytes after the previous tensor, "
                       "which ends at 8 (tensor 'b')");
}

TEST(SafetensorsMalformedTest, OffsetsNotStartingAtZero) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                       std::string(12, '\0'),
                       "data_offsets [4, 12]: the first tensor must begin at offset 0 "
                       "(tensor 'w')");
}

TEST(SafetensorsMalformedTest, OffsetsEndingBeforeTheyBegin) {
  ExpectHeaderRejected(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})",
                       kEightBytes, "data_offsets [8, 4] end before they begin (tensor 'b')");
}

TEST(SafetensorsMalformedTest, ByteSizeNotMatchingTheShape) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kEightBytes,
                       "data_offsets [0, 8] hold 8 bytes, but shape [3] of F32 needs 12 "
                       "(tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"F16","shape":[],"data_offsets":[0,8]}})", kEightBytes,
                       "shape [] of F16 needs 2");
}

TEST(SafetensorsMalformedTest, ElementOrBitCountOverflow) {
  ExpectHeaderRejected(R"({"w":{"dtype":"U8","shape":[4294967296,4294967296],)"
                       R"("data_offsets":[0,8]}})",
                       kEightBytes, "element count of shape [4294967296, 4294967296] overflows");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[1152921504606846976],)"
                       R"("data_offsets":[0,8]}})",
                       kEightBytes, "bit size of shape [1152921504606846976] of F32 overflows");
  ExpectHeaderRejected(R"({"w":{"dtype":"U8","shape":[9223372036854775808],)"
                       R"("data_offsets":[0,8]}})",
                       kEightBytes, "shape entry 0 is 9223372036854775808, larger than 2^63-1");
}

TEST(SafetensorsMalformedTest, SubByteDtypeNotFillingWholeBytes) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})",
                       std::string(2, '\0'), "shape [3] of F4 is not a whole number of bytes");
}

TEST(SafetensorsMalformedTest, TrailingBytesAfterTheLastTensor) {
  ExpectRejected(FileBytes(kValidHeader, kEightBytes + "junk"),
                 "4 trailing bytes after the last tensor (the data buffer must be fully "
                 "indexed)");
}

TEST(SafetensorsMalformedTest, DuplicateKeys) {
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                       kEightBytes, "the header lists this tensor name twice (tensor 'w')");
  ExpectHeaderRejected(R"({"w":{"dtype":"F32","dtype":"F16","shape":[2],"data_offsets":[0,8]}})",
                       kEightBytes, "entry repeats the field 'dtype' (tensor 'w')");
  ExpectHeaderRejected(R"({"__metadata__":{"format":"pt","format":"pt"}})", "",
                       "__metadata__ repeats the key 'format'");
}

TEST(SafetensorsMalformedTest, MetadataNotAStringToStringMap) {
  ExpectHeaderRejected(R"({"__metadata__":{"format":1},)"
                       R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                       kEightBytes, "__metadata__ value of 'format' is 1, expected a string");
  ExpectHeaderRejected(R"({"__metadata__":"pt"})", "",
                       R"(__metadata__ is "pt", expected an object mapping strings to strings)");
}

TEST(SafetensorsMalformedTest, AcceptsWhatTheReferenceAccepts) {
  // Out-of-offset-order listing, padding, unknown fields, null metadata, every dtype's size.
  const std::string header =
      R"({"__metadata__":null, "c":{"dtype":"C64","shape":[1],"data_offsets":[4,12]},)"
      R"( "f4":{"dtype":"F4","shape":[2,3],"data_offsets":[1,4],"extra":[1]},)"
      R"( "b":{"dtype":"BOOL","shape":[],"data_offsets":[0,1]},)"
      R"( "f6":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[12,15]}}   )";
  absl::StatusOr<SafetensorsFile> file =
      ReadSafetensors(WriteTemp("accepted.safetensors", FileBytes(header, std::string(15, 'x'))));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->names(), ElementsAre("c", "f4", "b", "f6"));
  EXPECT_TRUE(file->metadata().empty());
  EXPECT_EQ(file->Find("f4")->bytes.size(), 3u);
  EXPECT_EQ(file->Find("f4")->bytes.data() - file->Find("b")->bytes.data(), 1);  // unaligned
  EXPECT_EQ(SafetensorsDtypeBits("F8_E8M0"), 8);
  EXPECT_EQ(SafetensorsDtypeBits("U64"), 64);
  EXPECT_EQ(SafetensorsDtypeBits("F128"), 0);
}

TEST(SafetensorsMalformedTest, EveryPrefixOfAValidFileIsRejected) {
  const std::string whole = FileBytes(kValidHeader, kEightBytes);
  for (size_t size = 0; size < whole.size(); ++size) {
    EXPECT_FALSE(ReadBytes(whole.substr(0, size)).ok()) << "prefix of " << size << " bytes";
  }
}

TEST(SafetensorsMalformedTest, SingleByteCorruptionNeverCrashes) {
  // Every value of every byte: the reader must return. A changed length field can never
  // describe a consistent file; changed data bytes are not validated by the format.
  const std::string whole = FileBytes(kValidHeader, kEightBytes);
  const size_t data_start = whole.size() - kEightBytes.size();
  for (size_t i = 0; i < whole.size(); ++i) {
    for (int value = 0; value < 256; value += (i < 8 || i >= data_start) ? 1 : 37) {
      std::string corrupt = whole;
      if (corrupt[i] == static_cast<char>(value)) continue;
      corrupt[i] = static_cast<char>(value);
      const absl::Status status = ReadBytes(corrupt);
      if (i < 8) {
        EXPECT_FALSE(status.ok()) << "length byte " << i << " = " << value;
      } else if (i >= data_start) {
        EXPECT_TRUE(status.ok()) << status;
      }
    }
  }
}

}  // namespace
}  // namespace xlmr::io
