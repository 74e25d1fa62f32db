#include "framework/data/data_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace xlmr::data::internal {

absl::string_view SkipByteOrderMark(absl::string_view content) {
  absl::ConsumePrefix(&content, "\xEF\xBB\xBF");
  return content;
}

std::string LowerExtension(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return absl::AsciiStrToLower(path.substr(dot));
}

absl::Status LineError(const std::string& file, int64_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", what));
}

std::string JsonErrorDetail(const std::string& what) {
  absl::string_view detail = what;
  const size_t bracket = detail.find("] ");
  if (bracket != absl::string_view::npos) detail.remove_prefix(bracket + 2);
  absl::ConsumePrefix(&detail, "parse error at line 1, ");
  return std::string(detail);
}

}  // namespace xlmr::data::internal
