#include "framework/data/token_cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/core/fingerprint.h"
#include "framework/core/status_macros.h"

namespace xlmr::data::internal {
namespace {

constexpr char kMagic[8] = {'X', 'L', 'M', 'R', 'T', 'O', 'K', 'C'};

struct CacheHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t key;
  uint64_t num_examples;
  uint64_t num_tokens;
  uint64_t num_label_names;
  uint64_t label_name_bytes;
  uint64_t checksum;
};
static_assert(sizeof(CacheHeader) == 64, "the header layout is part of the file format");

// One array of the payload, in file order.
struct Section {
  const void* data;
  size_t bytes;
};

template <typename T>
Section SectionOf(const std::vector<T>& values) {
  return {values.data(), values.size() * sizeof(T)};
}

std::string SystemError(absl::string_view what, const std::string& path) {
  return absl::StrCat(what, " ", path, " (", std::strerror(errno), ")");
}

// mkdir -p: every missing directory of `directory`.
absl::Status MakeDirectories(const std::string& directory) {
  for (size_t slash = directory.find('/', 1);; slash = directory.find('/', slash + 1)) {
    const std::string prefix = directory.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          SystemError("cannot create token cache directory", prefix));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

absl::Status WriteSections(const std::string& path, const std::vector<Section>& sections) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (file == nullptr) return absl::PermissionDeniedError(SystemError("cannot create", path));
  for (const Section& section : sections) {
    if (section.bytes > 0 &&
        std::fwrite(section.data, 1, section.bytes, file.get()) != section.bytes) {
      return absl::ResourceExhaustedError(SystemError("cannot write", path));
    }
  }
  // The data must be on disk before the rename makes the file visible.
  if (std::fflush(file.get()) != 0 || fsync(fileno(file.get())) != 0) {
    return absl::ResourceExhaustedError(SystemError("cannot write", path));
  }
  if (std::fclose(file.release()) != 0) {
    return absl::ResourceExhaustedError(SystemError("cannot write", path));
  }
  return absl::OkStatus();
}

std::string TemporaryNameFor(const std::string& path) {
  static std::atomic<int> counter{0};
  return absl::StrCat(path, ".tmp-", getpid(), "-", counter++);
}

absl::Status DataLoss(const std::string& path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("token cache ", path, ": ", what));
}

// Validated views into a mapped file.
struct MappedViews {
  TokenizedDataset::Views views;
  absl::Span<const int64_t> name_offsets;
  absl::Span<const char> name_bytes;
};

template <typename T>
absl::Span<const T> TakeArray(const char** cursor, uint64_t count) {
  absl::Span<const T> span(reinterpret_cast<const T*>(*cursor), count);
  *cursor += count * sizeof(T);
  return span;
}

// The sections' spans, once the length has been checked against the header's counts.
MappedViews SplitPayload(const char* base, const CacheHeader& header) {
  const char* cursor = base + sizeof(CacheHeader);
  MappedViews mapped;
  mapped.views.offsets = TakeArray<int64_t>(&cursor, header.num_examples + 1);
  mapped.views.lines = TakeArray<int64_t>(&cursor, header.num_examples);
  mapped.name_offsets = TakeArray<int64_t>(&cursor, header.num_label_names + 1);
  mapped.views.token_ids = TakeArray<int32_t>(&cursor, header.num_tokens);
  mapped.views.label_index = TakeArray<int32_t>(&cursor, header.num_examples);
  mapped.name_bytes = TakeArray<char>(&cursor, header.label_name_bytes);
  return mapped;
}

absl::Status CheckHeader(const CacheHeader& header, uint64_t key, uint64_t file_bytes,
                         const std::string& path) {
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0) return DataLoss(path, "bad magic");
  if (header.version != kTokenCacheFormatVersion || header.header_bytes != sizeof(CacheHeader)) {
    return DataLoss(path, absl::StrCat("format version ", header.version, ", expected ",
                                       kTokenCacheFormatVersion));
  }
  if (header.key != key) return DataLoss(path, "written for another key");
  // Each count is bounded by the file size first, so the sum below cannot overflow.
  for (uint64_t count :
       {header.num_examples, header.num_tokens, header.num_label_names, header.label_name_bytes}) {
    if (count > file_bytes) return DataLoss(path, "counts larger than the file");
  }
  const uint64_t expected = sizeof(CacheHeader) + 8 * (header.num_examples + 1) +
                            8 * header.num_examples + 8 * (header.num_label_names + 1) +
                            4 * header.num_tokens + 4 * header.num_examples +
                            header.label_name_bytes;
  if (expected != file_bytes) {
    return DataLoss(path, absl::StrCat(file_bytes, " bytes, the header implies ", expected));
  }
  return absl::OkStatus();
}

// Array invariants a correct writer guarantees; checked so that no file can make us crash.
absl::Status CheckArrays(MappedViews* mapped, const std::string& path) {
  const TokenizedDataset::Views& views = mapped->views;
  if (views.offsets.front() != 0 ||
      views.offsets.back() != static_cast<int64_t>(views.token_ids.size())) {
    return DataLoss(path, "offsets do not span the tokens");
  }
  for (size_t i = 0; i + 1 < views.offsets.size(); ++i) {
    if (views.offsets[i] > views.offsets[i + 1]) return DataLoss(path, "decreasing offsets");
  }
  const auto& names = mapped->name_offsets;
  if (names.front() != 0 || names.back() != static_cast<int64_t>(mapped->name_bytes.size())) {
    return DataLoss(path, "label name offsets do not span the names");
  }
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    if (names[i] >= names[i + 1]) return DataLoss(path, "empty or misordered label name");
    std::string name(mapped->name_bytes.data() + names[i], names[i + 1] - names[i]);
    if (i > 0 && !(mapped->views.label_names.back() < name)) {
      return DataLoss(path, "label names not sorted and distinct");
    }
    mapped->views.label_names.push_back(std::move(name));
  }
  const auto num_names = static_cast<int32_t>(mapped->views.label_names.size());
  for (int32_t index : views.label_index) {
    if (index < -1 || index >= num_names) return DataLoss(path, "label index out of range");
  }
  return absl::OkStatus();
}

uint64_t PayloadChecksum(const std::vector<Section>& sections) {
  Fingerprint fingerprint;
  for (const Section& section : sections) fingerprint.Update(section.data, section.bytes);
  return fingerprint.Value();
}

}  // namespace

absl::Status WriteTokenCacheFile(const std::string& path, uint64_t key,
                                 const TokenizedColumns& columns) {
  std::vector<int64_t> name_offsets{0};
  std::string name_bytes;
  for (const std::string& name : columns.label_names) {
    name_bytes += name;
    name_offsets.push_back(static_cast<int64_t>(name_bytes.size()));
  }
  std::vector<Section> sections = {
      SectionOf(columns.offsets),     SectionOf(columns.lines),
      SectionOf(name_offsets),        SectionOf(columns.token_ids),
      SectionOf(columns.label_index), {name_bytes.data(), name_bytes.size()}};
  CacheHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.version = kTokenCacheFormatVersion;
  header.header_bytes = sizeof(CacheHeader);
  header.key = key;
  header.num_examples = columns.lines.size();
  header.num_tokens = columns.token_ids.size();
  header.num_label_names = columns.label_names.size();
  header.label_name_bytes = name_bytes.size();
  header.checksum = PayloadChecksum(sections);
  sections.insert(sections.begin(), Section{&header, sizeof(header)});

  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    XLMR_RETURN_IF_ERROR(MakeDirectories(path.substr(0, slash)));
  }
  const std::string temporary = TemporaryNameFor(path);
  absl::Status written = WriteSections(temporary, sections);
  if (written.ok() && std::rename(temporary.c_str(), path.c_str()) != 0) {
    written = absl::PermissionDeniedError(SystemError("cannot rename the token cache to", path));
  }
  if (!written.ok()) std::remove(temporary.c_str());
  return written;
}

absl::StatusOr<TokenizedDataset> MapTokenCacheFile(const std::string& path, uint64_t key,
                                                   const std::string& data_path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no token cache ", path));
    return DataLoss(path, std::strerror(errno));
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || info.st_size < static_cast<off_t>(sizeof(CacheHeader))) {
    close(fd);
    return DataLoss(path, "shorter than its header");
  }
  const auto file_bytes = static_cast<size_t>(info.st_size);
  void* address = mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);  // the mapping stays valid without the descriptor
  if (address == MAP_FAILED) return DataLoss(path, SystemError("cannot map", path));
  std::shared_ptr<const void> owner(
      address, [file_bytes](const void* p) { munmap(const_cast<void*>(p), file_bytes); });

  const char* base = static_cast<const char*>(address);
  CacheHeader header;
  std::memcpy(&header, base, sizeof(header));
  XLMR_RETURN_IF_ERROR(CheckHeader(header, key, file_bytes, path));
  Fingerprint payload;
  payload.Update(base + sizeof(header), file_bytes - sizeof(header));
  if (payload.Value() != header.checksum) return DataLoss(path, "checksum mismatch");
  MappedViews mapped = SplitPayload(base, header);
  XLMR_RETURN_IF_ERROR(CheckArrays(&mapped, path));
  return TokenizedDataset(data_path, std::move(owner), std::move(mapped.views));
}

}  // namespace xlmr::data::internal
