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

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open file (", std::strerror(errno), ")"));
  }
  std::string content;
  char chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file.get())) > 0) content.append(chunk, got);
  if (std::ferror(file.get())) {
    return absl::DataLossError(absl::StrCat(path, ": read error (", std::strerror(errno), ")"));
  }
  return content;
}

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
