#include "framework/io/whole_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace xlmr::io {

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

}  // namespace xlmr::io
