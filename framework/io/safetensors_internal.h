// Private to //framework/io:safetensors: format facts shared by the reader and the writer.
#ifndef XLMR_FRAMEWORK_IO_SAFETENSORS_INTERNAL_H_
#define XLMR_FRAMEWORK_IO_SAFETENSORS_INTERNAL_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace xlmr::io {

// The header key that holds the free-form string->string metadata instead of a tensor.
inline constexpr char kMetadataKey[] = "__metadata__";

// Position of `dtype` in the reference's `Dtype` enum (BOOL = 0 ... U64 = 21), or -1 when
// unknown. The reference writer orders tensors by this rank, largest first.
int SafetensorsDtypeRank(absl::string_view dtype);

// Offset of the first byte of `text` that does not start a well-formed UTF-8 sequence (the
// rules of Rust's str::from_utf8: no overlong forms, no surrogates, nothing above U+10FFFF),
// or absl::string_view::npos when all of `text` is valid.
size_t FirstInvalidUtf8Byte(absl::string_view text);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_SAFETENSORS_INTERNAL_H_
