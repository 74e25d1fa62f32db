// TensorBoard event files: the bytes TensorBoard reads, written without TensorFlow or protobuf.
//
// A file is a sequence of TFRecord records, each
//   uint64 length (little endian) | uint32 masked CRC32C of those 8 bytes |
//   `length` bytes of payload      | uint32 masked CRC32C of the payload
// where masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8. Each payload is a serialized
// tensorflow.Event protocol buffer; the few fields used are encoded here by hand
// (docs/DECISIONS.md: why not libprotobuf):
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; }
// The first record of a file is the version event ("brain.Event:2"), as TensorFlow writes it.
#ifndef XLMR_FRAMEWORK_IO_EVENT_FILE_H_
#define XLMR_FRAMEWORK_IO_EVENT_FILE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xlmr::io {

// A scalar as TensorBoard shows it: a tag ("train/loss") and its value at a step.
struct ScalarValue {
  std::string tag;
  float value = 0;
};

// The serialized Event payloads.
std::string EncodeFileVersionEvent(double wall_time);
std::string EncodeScalarsEvent(double wall_time, int64_t step, const std::vector<ScalarValue>& scalars);

// One TFRecord record holding `payload`.
std::string FrameRecord(const std::string& payload);

// The byte offsets at which each whole, intact record of `bytes` ends, from the start: reading
// stops at the first record that is cut short or whose length or payload CRC does not match
// (what a process killed mid-write leaves at the end of a file).
std::vector<uint64_t> IntactRecordEnds(const std::string& bytes);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_EVENT_FILE_H_
