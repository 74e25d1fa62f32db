#include "framework/io/file_manifest.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "framework/io/file_checksum.h"
#include "nlohmann/json.hpp"

namespace xlmr::io {
namespace {

constexpr char kFormat[] = "xlmr_trainer.manifest";
constexpr int kVersion = 1;
constexpr char kChecksum[] = "crc32c";

using Listed = std::map<std::string, FileChecksum>;  // by name: errors come in a fixed order

std::string Hex(uint32_t crc) { return absl::StrFormat("0x%08x", crc); }

// A file inside the directory: a relative path of plain segments (sentence-transformers keeps
// module configs in subdirectories, 1_Pooling/config.json), none empty, "." or "..", and no
// control character (error lines stay one line); never the manifest itself.
bool IsPlainName(const std::string& name) {
  const bool control = std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  if (name == kManifestFileName || control) return false;
  for (const absl::string_view segment : absl::StrSplit(name, '/')) {
    if (segment.empty() || segment == "." || segment == "..") return false;
  }
  return true;
}

bool HasExactlyKeys(const nlohmann::json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object() || object.size() != keys.size()) return false;
  for (const char* key : keys) {
    if (!object.contains(key)) return false;
  }
  return true;
}

// One entry of "files", checked field by field.
absl::Status ParseEntry(const nlohmann::json& entry, const std::string& path, Listed& listed) {
  if (!HasExactlyKeys(entry, {"name", "size", "crc32c"}) || !entry["name"].is_string() ||
      !entry["size"].is_number_unsigned() || !entry["crc32c"].is_number_unsigned() ||
      entry["crc32c"].get<uint64_t>() > UINT32_MAX) {
    return absl::DataLossError(absl::StrCat(path, ": malformed entry ", entry.dump(),
                                            " (expected {\"name\", \"size\", \"crc32c\"} with unsigned integers)"));
  }
  const std::string name = entry["name"].get<std::string>();
  if (!IsPlainName(name)) return absl::DataLossError(absl::StrCat(path, ": ", entry["name"].dump(), " is not a file name"));
  const FileChecksum checksum{entry["size"].get<uint64_t>(), static_cast<uint32_t>(entry["crc32c"].get<uint64_t>())};
  if (!listed.emplace(name, checksum).second) {
    return absl::DataLossError(absl::StrCat(path, ": '", name, "' is listed twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Listed> ParseManifest(const std::string& text, const std::string& path) {
  const nlohmann::json manifest = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded()) return absl::DataLossError(absl::StrCat(path, ": not valid JSON"));
  if (!HasExactlyKeys(manifest, {"format", "version", "checksum", "files"}) || manifest["format"] != kFormat ||
      manifest["version"] != kVersion || manifest["checksum"] != kChecksum || !manifest["files"].is_array()) {
    return absl::DataLossError(absl::StrCat(path, ": expected {\"format\": \"", kFormat, "\", \"version\": ", kVersion,
                                            ", \"checksum\": \"", kChecksum, "\", \"files\": [...]}"));
  }
  Listed listed;
  for (const nlohmann::json& entry : manifest["files"]) XLMR_RETURN_IF_ERROR(ParseEntry(entry, path, listed));
  return listed;
}

absl::Status VerifyFile(const std::string& path, const FileChecksum& recorded) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::DataLossError(absl::StrCat(path, ": missing (listed in ", kManifestFileName, ")"));
  }
  const uint64_t size = std::filesystem::file_size(path, error);
  if (error) return absl::DataLossError(absl::StrCat(path, ": ", error.message()));
  if (size != recorded.size) {  // cheap, and says "truncated" where a CRC would only differ
    return absl::DataLossError(absl::StrCat(path, ": ", size, " bytes, ", kManifestFileName, " recorded ",
                                            recorded.size, size < recorded.size ? " (truncated)" : ""));
  }
  absl::StatusOr<FileChecksum> actual = ChecksumFile(path);
  if (!actual.ok()) return absl::DataLossError(actual.status().message());
  if (actual->size != recorded.size || actual->crc32c != recorded.crc32c) {
    return absl::DataLossError(absl::StrCat(path, ": CRC32C ", Hex(actual->crc32c), ", ", kManifestFileName,
                                            " recorded ", Hex(recorded.crc32c), " (the bytes changed)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteManifest(const std::string& directory, const std::vector<std::string>& files) {
  // One file per line, so that a person can read it; the reader does not care.
  std::string text = absl::StrCat(R"({"format": ")", kFormat, R"(", "version": )", kVersion, R"(, "checksum": ")",
                                  kChecksum, R"(", "files": [)");
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = directory + "/" + files[i];
    XLMR_ASSIGN_OR_RETURN(const FileChecksum checksum, ChecksumFile(path));
    XLMR_RETURN_IF_ERROR(SyncFile(path));
    const nlohmann::ordered_json entry = {{"name", files[i]}, {"size", checksum.size}, {"crc32c", checksum.crc32c}};
    absl::StrAppend(&text, i == 0 ? "\n  " : ",\n  ", entry.dump());
  }
  absl::StrAppend(&text, "\n]}\n");
  // WriteFileDurably flushes the directory too: the files' names and the manifest's are on disk.
  return WriteFileDurably(directory + "/" + kManifestFileName, text);
}

absl::StatusOr<ManifestCheck> VerifyManifest(const std::string& directory, const std::vector<std::string>& required,
                                             ManifestScope scope) {
  const std::string path = directory + "/" + kManifestFileName;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return ManifestCheck::kNoManifest;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  XLMR_ASSIGN_OR_RETURN(const Listed listed, ParseManifest(text.str(), path));
  for (const std::string& name : required) {
    if (listed.count(name) == 0) return absl::DataLossError(absl::StrCat(path, ": does not list ", name));
  }
  if (scope == ManifestScope::kRequiredOnly) {
    for (const std::string& name : required) XLMR_RETURN_IF_ERROR(VerifyFile(directory + "/" + name, listed.at(name)));
  } else {
    for (const auto& [name, recorded] : listed) XLMR_RETURN_IF_ERROR(VerifyFile(directory + "/" + name, recorded));
  }
  return ManifestCheck::kVerified;
}

}  // namespace xlmr::io
