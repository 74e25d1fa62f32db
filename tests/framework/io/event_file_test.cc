// The event file bytes against those TensorBoard's own writer produces. The expected hex was
// printed by tensorboard 2.21 (pip) with tensorboard.summary.writer.record_writer.RecordWriter
// writing event_pb2.Event messages with the same fields (the script is in the comment of each
// case), so a wrong field number, wire type, CRC mask or length byte changes the bytes.
#include "framework/io/event_file.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace xlmr::io {
namespace {

std::string Hex(const std::string& bytes) { return absl::BytesToHexString(bytes); }

// Event(wall_time=1764000000.25, file_version="brain.Event:2") (step 0 is left out, as
// protobuf leaves it out), then Event(wall_time=1764000001.5, step=300, summary=Summary(value=[
// Value(tag="train/loss", simple_value=0.6931), Value(tag="eval/accuracy", simple_value=0.875)])).
constexpr char kTensorBoardBytes[] =
    "1800000000000000a37f4b2209000010402049da411a0d627261696e2e4576656e743a327b854a4b"
    "3700000000000000e7e8ca5909000060402049da4110ac022a290a110a0a747261696e2f6c6f7373"
    "15006f313f0a140a0d6576616c2f6163637572616379150000603ffb742541";

std::string OurBytes() {
  return FrameRecord(EncodeFileVersionEvent(1764000000.25)) +
         FrameRecord(EncodeScalarsEvent(1764000001.5, 300, {{"train/loss", 0.6931f}, {"eval/accuracy", 0.875f}}));
}

TEST(EventFileTest, BytesEqualTensorBoardsWriter) { EXPECT_EQ(Hex(OurBytes()), kTensorBoardBytes); }

TEST(EventFileTest, IntactRecordEndsFindsEveryRecord) {
  const std::string bytes = OurBytes();
  const std::string first = FrameRecord(EncodeFileVersionEvent(1764000000.25));
  EXPECT_EQ(IntactRecordEnds(bytes), (std::vector<uint64_t>{first.size(), bytes.size()}));
  EXPECT_TRUE(IntactRecordEnds("").empty());
}

// What a kill mid-write leaves: the last record cut anywhere is not counted.
TEST(EventFileTest, IntactRecordEndsStopsAtACutRecord) {
  const std::string bytes = OurBytes();
  const uint64_t first = FrameRecord(EncodeFileVersionEvent(1764000000.25)).size();
  for (uint64_t cut = first; cut < bytes.size(); ++cut) {
    EXPECT_EQ(IntactRecordEnds(bytes.substr(0, cut)), std::vector<uint64_t>{first}) << "cut at " << cut;
  }
}

TEST(EventFileTest, IntactRecordEndsStopsAtAFlippedBit) {
  const std::string bytes = OurBytes();
  const uint64_t first = FrameRecord(EncodeFileVersionEvent(1764000000.25)).size();
  for (uint64_t at = first; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] ^= 0x10;
    EXPECT_EQ(IntactRecordEnds(damaged), std::vector<uint64_t>{first}) << "bit flipped at byte " << at;
  }
}

}  // namespace
}  // namespace xlmr::io
