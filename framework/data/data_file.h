// Internal to //framework/data's readers (record_reader, tagged_sentence_reader): what every
// reader of a user's data file does the same way once io::ReadWholeFile has its bytes:
// skipping a UTF-8 byte order mark, the one-line "file:line: what" error, the extension that
// picks the format and nlohmann-json's parse message without its preamble.
#ifndef XLMR_FRAMEWORK_DATA_DATA_FILE_H_
#define XLMR_FRAMEWORK_DATA_DATA_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::data::internal {

// `content` without a leading UTF-8 byte order mark (EF BB BF), if it has one.
absl::string_view SkipByteOrderMark(absl::string_view content);

// The lower-cased extension of the file's base name with its dot (".jsonl"), or "" when the
// base name has no dot.
std::string LowerExtension(const std::string& path);

// InvalidArgument "<file>:<line>: <what>" (line 1-based).
absl::Status LineError(const std::string& file, int64_t line, absl::string_view what);

// nlohmann's parse error message without its "[json.exception...] parse error at line 1, "
// preamble: each JSON text we parse is a single line, so only the column means something.
std::string JsonErrorDetail(const std::string& what);

}  // namespace xlmr::data::internal

#endif  // XLMR_FRAMEWORK_DATA_DATA_FILE_H_
