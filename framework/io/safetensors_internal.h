// Private to //framework/io:safetensors: format facts and helpers shared by its .cc files.
#ifndef XLMR_FRAMEWORK_IO_SAFETENSORS_INTERNAL_H_
#define XLMR_FRAMEWORK_IO_SAFETENSORS_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/tensor/tensor.h"

namespace xlmr::io {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian and is copied to and from host memory as is");

// The header key that holds the free-form string->string metadata instead of a tensor.
inline constexpr char kMetadataKey[] = "__metadata__";
// Size of the header-length field that starts every file.
inline constexpr size_t kLengthFieldBytes = 8;

// Position of `dtype` in the reference's `Dtype` enum (BOOL = 0 ... U64 = 21), or -1 when
// unknown. The reference writer orders tensors by this rank, largest first.
int SafetensorsDtypeRank(absl::string_view dtype);

// Offset of the first byte of `text` that does not start a well-formed UTF-8 sequence (the
// rules of Rust's str::from_utf8: no overlong forms, no surrogates, nothing above U+10FFFF),
// or absl::string_view::npos when all of `text` is valid.
size_t FirstInvalidUtf8Byte(absl::string_view text);

// InvalidArgument "<path>: <what>" and "<path>: <what> (tensor '<tensor>')".
absl::Status Invalid(const std::string& path, absl::string_view what);
absl::Status InvalidTensor(const std::string& path, absl::string_view what,
                           absl::string_view tensor);

// One tensor entry of a header whose fields have the right types; its offsets are not yet
// checked against the other entries or the file size.
struct HeaderEntry {
  std::string name;
  std::string dtype;  // a known dtype name
  Shape shape;        // every dimension in [0, 2^63)
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct ParsedHeader {
  std::map<std::string, std::string> metadata;
  std::vector<HeaderEntry> entries;  // in header order
};

// Parses the `header` text of the file at `path` (used in messages): valid UTF-8, valid JSON,
// an object, no repeated key in any object, "__metadata__" absent/null or string->string, and
// every other entry an object with a known "dtype" string, a "shape" array of non-negative
// integers and "data_offsets" [begin, end] of non-negative integers (other fields ignored).
absl::StatusOr<ParsedHeader> ParseHeader(const std::string& path, absl::string_view header);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_SAFETENSORS_INTERNAL_H_
