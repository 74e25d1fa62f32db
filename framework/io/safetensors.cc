// Safetensors reader and writer; the format and the reference rules are summarised in the
// header and in docs (xlmr_reference.md section 4).
#include "framework/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "framework/core/status_macros.h"
#include "framework/io/safetensors_internal.h"
#include "nlohmann/json.hpp"

namespace xlmr::io {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian and is copied here as host bytes");

using Json = nlohmann::ordered_json;  // keeps the header's key order (= file order)

// The reference's MAX_HEADER_SIZE: a larger length is taken as a corrupt or hostile file.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr size_t kLengthFieldBytes = 8;

// ---- Reading the file ----------------------------------------------------------------------

struct FileContents {
  std::unique_ptr<uint8_t[]> bytes;
  size_t size = 0;
};

// Closes a file descriptor on every return path.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

absl::Status ReadExactly(int fd, uint8_t* out, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    const size_t chunk = std::min<size_t>(size - done, size_t{1} << 30);
    const ssize_t got = read(fd, out + done, chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": read failed"));
    if (got == 0) return absl::DataLossError(absl::StrCat(path, ": file shrank while being read"));
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

// Reads the whole file. A plain read (not mmap) so that a file truncated by someone else
// while we hold it gives an error, not SIGBUS.
absl::StatusOr<FileContents> ReadWholeFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  FdCloser closer(fd);
  struct stat info;
  if (fstat(fd, &info) != 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot stat"));
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  FileContents contents;
  contents.size = static_cast<size_t>(info.st_size);
  contents.bytes.reset(new (std::nothrow) uint8_t[std::max<size_t>(contents.size, 1)]);
  if (contents.bytes == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": cannot allocate ", contents.size, " bytes to read it"));
  }
  XLMR_RETURN_IF_ERROR(ReadExactly(fd, contents.bytes.get(), contents.size, path));
  return contents;
}

// ---- Parsing the header ---------------------------------------------------------------------

// Watches nlohmann's parse events and remembers the first key repeated inside one object
// (nlohmann itself keeps the last value silently).
class RepeatedKeyFinder {
 public:
  struct Repeat {
    std::string key;
    std::string owner;  // key of the enclosing object in its parent ("" at the top level)
    size_t depth = 0;   // 1 = top-level object
  };

  bool OnEvent(Json::parse_event_t event, const Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        open_objects_.push_back({{}, open_objects_.empty() ? "" : open_objects_.back().last_key});
        break;
      case Json::parse_event_t::object_end:
        open_objects_.pop_back();
        break;
      case Json::parse_event_t::key:
        RecordKey(parsed.get<std::string>());
        break;
      default:
        break;
    }
    return true;  // keep every value
  }

  const absl::optional<Repeat>& first_repeat() const { return first_repeat_; }

 private:
  struct OpenObject {
    absl::flat_hash_set<std::string> keys;
    std::string owner;
    std::string last_key;
  };

  void RecordKey(std::string key) {
    OpenObject& object = open_objects_.back();
    if (!object.keys.insert(key).second && !first_repeat_.has_value()) {
      first_repeat_ = Repeat{key, object.owner, open_objects_.size()};
    }
    object.last_key = std::move(key);
  }

  std::vector<OpenObject> open_objects_;
  absl::optional<Repeat> first_repeat_;
};

absl::Status Invalid(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::Status InvalidTensor(const std::string& path, absl::string_view what,
                           absl::string_view tensor) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, " (tensor '", tensor, "')"));
}

absl::Status RepeatedKeyError(const std::string& path, const RepeatedKeyFinder::Repeat& repeat) {
  if (repeat.depth == 1 && repeat.key != kMetadataKey) {
    return InvalidTensor(path, "the header lists this tensor name twice", repeat.key);
  }
  if (repeat.depth == 2 && repeat.owner == kMetadataKey) {
    return Invalid(path, absl::StrCat(kMetadataKey, " repeats the key '", repeat.key, "'"));
  }
  if (repeat.depth == 2) {
    return InvalidTensor(path, absl::StrCat("entry repeats the field '", repeat.key, "'"),
                         repeat.owner);
  }
  return Invalid(path, absl::StrCat("header repeats the JSON key '", repeat.key, "'"));
}

// Steps 4 of the reference: UTF-8, then JSON; plus our repeated-key rule.
absl::StatusOr<Json> ParseHeaderJson(const std::string& path, absl::string_view header) {
  const size_t bad_byte = FirstInvalidUtf8Byte(header);
  if (bad_byte != absl::string_view::npos) {
    return Invalid(path, absl::StrCat("header is not valid UTF-8 (byte ", bad_byte,
                                      " of the header, file offset ", kLengthFieldBytes + bad_byte,
                                      ")"));
  }
  RepeatedKeyFinder finder;
  Json root;
  // nlohmann reports syntax errors by throwing; they are turned into a Status right here.
  try {
    root = Json::parse(header.begin(), header.end(),
                       [&finder](int, Json::parse_event_t event, Json& parsed) {
                         return finder.OnEvent(event, parsed);
                       });
  } catch (const Json::exception& error) {
    return Invalid(path, absl::StrCat("header is not valid JSON: ", error.what()));
  }
  if (!root.is_object()) {
    return Invalid(path, absl::StrCat("header is a JSON ", root.type_name(), ", expected an object"));
  }
  if (finder.first_repeat().has_value()) return RepeatedKeyError(path, *finder.first_repeat());
  return root;
}

// A short description of a JSON value for error messages: its text, or its type when long.
std::string Describe(const Json& value) {
  std::string text = value.dump();
  return text.size() <= 40 ? text : absl::StrCat("a JSON ", value.type_name());
}

absl::Status ParseMetadata(const std::string& path, const Json& value,
                           std::map<std::string, std::string>* metadata) {
  if (value.is_null()) return absl::OkStatus();  // serde reads null as "no metadata"
  if (!value.is_object()) {
    return Invalid(path, absl::StrCat(kMetadataKey, " is ", Describe(value),
                                      ", expected an object mapping strings to strings"));
  }
  for (const auto& [key, entry] : value.items()) {
    if (!entry.is_string()) {
      return Invalid(path, absl::StrCat(kMetadataKey, " value of '", key, "' is ", Describe(entry),
                                        ", expected a string"));
    }
    (*metadata)[key] = entry.get<std::string>();
  }
  return absl::OkStatus();
}

// One tensor entry of the header, before layout validation.
struct HeaderEntry {
  std::string name;
  std::string dtype;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

absl::Status ParseDtype(const std::string& path, const Json& value, HeaderEntry* entry) {
  if (!value.is_string()) {
    return InvalidTensor(path, absl::StrCat("field 'dtype' is ", Describe(value),
                                            ", expected a string"), entry->name);
  }
  entry->dtype = value.get<std::string>();
  if (SafetensorsDtypeBits(entry->dtype) == 0) {
    return InvalidTensor(path, absl::StrCat("unknown dtype '", entry->dtype, "'"), entry->name);
  }
  return absl::OkStatus();
}

absl::Status ParseShape(const std::string& path, const Json& value, HeaderEntry* entry) {
  if (!value.is_array()) {
    return InvalidTensor(path, absl::StrCat("field 'shape' is ", Describe(value),
                                            ", expected an array of non-negative integers"),
                         entry->name);
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& dim = value[i];
    if (!dim.is_number_unsigned()) {
      return InvalidTensor(path, absl::StrCat("shape entry ", i, " is ", Describe(dim),
                                              ", expected a non-negative integer"), entry->name);
    }
    const uint64_t size = dim.get<uint64_t>();
    if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return InvalidTensor(path, absl::StrCat("shape entry ", i, " is ", size,
                                              ", larger than 2^63-1"), entry->name);
    }
    entry->shape.push_back(static_cast<int64_t>(size));
  }
  return absl::OkStatus();
}

absl::Status ParseOffsets(const std::string& path, const Json& value, HeaderEntry* entry) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number_unsigned() ||
      !value[1].is_number_unsigned()) {
    return InvalidTensor(path, absl::StrCat("field 'data_offsets' is ", Describe(value),
                                            ", expected [begin, end] of non-negative integers"),
                         entry->name);
  }
  entry->begin = value[0].get<uint64_t>();
  entry->end = value[1].get<uint64_t>();
  return absl::OkStatus();
}

// Parses one tensor entry. Unknown fields are ignored, as serde does.
absl::StatusOr<HeaderEntry> ParseEntry(const std::string& path, const std::string& name,
                                       const Json& value) {
  HeaderEntry entry;
  entry.name = name;
  if (!value.is_object()) {
    return InvalidTensor(path, absl::StrCat("entry is ", Describe(value), ", expected an object"),
                         name);
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(field)) {
      return InvalidTensor(path, absl::StrCat("missing field '", field, "'"), name);
    }
  }
  XLMR_RETURN_IF_ERROR(ParseDtype(path, value["dtype"], &entry));
  XLMR_RETURN_IF_ERROR(ParseShape(path, value["shape"], &entry));
  XLMR_RETURN_IF_ERROR(ParseOffsets(path, value["data_offsets"], &entry));
  return entry;
}

// Bytes that `entry`'s shape and dtype need, with the reference's overflow and whole-byte checks.
absl::StatusOr<uint64_t> NeededBytes(const std::string& path, const HeaderEntry& entry) {
  uint64_t elements = 1;
  for (int64_t size : entry.shape) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(size), &elements)) {
      return InvalidTensor(path, absl::StrCat("element count of shape ", ShapeString(entry.shape),
                                              " overflows 64 bits"), entry.name);
    }
  }
  uint64_t bits = 0;
  if (__builtin_mul_overflow(elements, SafetensorsDtypeBits(entry.dtype), &bits)) {
    return InvalidTensor(path, absl::StrCat("bit size of shape ", ShapeString(entry.shape), " of ",
                                            entry.dtype, " overflows 64 bits"), entry.name);
  }
  if (bits % 8 != 0) {
    return InvalidTensor(path, absl::StrCat("shape ", ShapeString(entry.shape), " of ",
                                            entry.dtype, " is not a whole number of bytes"),
                         entry.name);
  }
  return bits / 8;
}

// Why a tensor cannot begin at its offsets, given that the previous one ended at `start`.
std::string OffsetProblem(const HeaderEntry& entry, uint64_t start) {
  if (entry.end < entry.begin) {
    return absl::StrCat("data_offsets [", entry.begin, ", ", entry.end, "] end before they begin");
  }
  if (entry.begin < start) {
    return absl::StrCat("data_offsets [", entry.begin, ", ", entry.end,
                        "] overlap the previous tensor, which ends at ", start);
  }
  if (start == 0) {
    return absl::StrCat("data_offsets [", entry.begin, ", ", entry.end,
                        "]: the first tensor must begin at offset 0");
  }
  return absl::StrCat("data_offsets [", entry.begin, ", ", entry.end, "] leave a gap of ",
                      entry.begin - start, " bytes after the previous tensor, which ends at ",
                      start);
}

// Step 5 of the reference: in order of offsets, tensors must tile [0, end) exactly, each with
// the byte size its shape and dtype need. Returns the end of the last tensor.
absl::StatusOr<uint64_t> ValidateLayout(const std::string& path,
                                        const std::vector<HeaderEntry>& entries) {
  std::vector<const HeaderEntry*> by_offset;
  for (const HeaderEntry& entry : entries) by_offset.push_back(&entry);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const HeaderEntry* a, const HeaderEntry* b) {
    return std::make_pair(a->begin, a->end) < std::make_pair(b->begin, b->end);
  });
  uint64_t start = 0;
  for (const HeaderEntry* entry : by_offset) {
    if (entry->begin != start || entry->end < entry->begin) {
      return InvalidTensor(path, OffsetProblem(*entry, start), entry->name);
    }
    XLMR_ASSIGN_OR_RETURN(const uint64_t needed, NeededBytes(path, *entry));
    if (entry->end - entry->begin != needed) {
      return InvalidTensor(path, absl::StrCat("data_offsets [", entry->begin, ", ", entry->end,
                                              "] hold ", entry->end - entry->begin,
                                              " bytes, but shape ", ShapeString(entry->shape),
                                              " of ", entry->dtype, " needs ", needed),
                           entry->name);
    }
    start = entry->end;
  }
  return start;
}

uint64_t LittleEndianU64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

// Steps 1-3 of the reference. Returns the header length N.
absl::StatusOr<uint64_t> HeaderLength(const std::string& path, const FileContents& contents) {
  if (contents.size < kLengthFieldBytes) {
    return Invalid(path, absl::StrCat("file is ", contents.size,
                                      " bytes, too small for the 8-byte header length"));
  }
  const uint64_t length = LittleEndianU64(contents.bytes.get());
  if (length > kMaxHeaderBytes) {
    return Invalid(path, absl::StrCat("header length ", length, " is larger than the limit of ",
                                      kMaxHeaderBytes, " bytes"));
  }
  if (length > contents.size - kLengthFieldBytes) {
    return Invalid(path, absl::StrCat("header length ", length, " goes past the end of the file (",
                                      contents.size - kLengthFieldBytes,
                                      " bytes follow the length field)"));
  }
  return length;
}

// Step 6 of the reference: the tensors must index the data buffer exactly.
absl::Status CheckDataSize(const std::string& path, uint64_t indexed, uint64_t data_size) {
  if (indexed < data_size) {
    return Invalid(path, absl::StrCat(data_size - indexed, " trailing bytes after the last tensor"
                                      " (the data buffer must be fully indexed)"));
  }
  if (indexed > data_size) {
    return Invalid(path, absl::StrCat("file is truncated: the header indexes ", indexed,
                                      " data bytes but only ", data_size, " follow it"));
  }
  return absl::OkStatus();
}

}  // namespace

const SafetensorsTensor* SafetensorsFile::Find(absl::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

absl::StatusOr<SafetensorsFile> ReadSafetensors(const std::string& path) {
  XLMR_ASSIGN_OR_RETURN(FileContents contents, ReadWholeFile(path));
  XLMR_ASSIGN_OR_RETURN(const uint64_t header_size, HeaderLength(path, contents));
  const absl::string_view header(reinterpret_cast<const char*>(contents.bytes.get()) +
                                     kLengthFieldBytes, header_size);
  XLMR_ASSIGN_OR_RETURN(const Json root, ParseHeaderJson(path, header));

  SafetensorsFile file;
  std::vector<HeaderEntry> entries;
  for (const auto& [key, value] : root.items()) {
    if (key == kMetadataKey) {
      XLMR_RETURN_IF_ERROR(ParseMetadata(path, value, &file.metadata_));
      continue;
    }
    XLMR_ASSIGN_OR_RETURN(HeaderEntry entry, ParseEntry(path, key, value));
    entries.push_back(std::move(entry));
  }
  XLMR_ASSIGN_OR_RETURN(const uint64_t indexed, ValidateLayout(path, entries));
  const size_t data_start = kLengthFieldBytes + header_size;
  XLMR_RETURN_IF_ERROR(CheckDataSize(path, indexed, contents.size - data_start));

  file.path_ = path;
  const uint8_t* data = contents.bytes.get() + data_start;
  for (HeaderEntry& entry : entries) {
    file.names_.push_back(entry.name);
    file.tensors_[entry.name] = SafetensorsTensor{
        std::move(entry.dtype), std::move(entry.shape),
        absl::Span<const uint8_t>(data + entry.begin, entry.end - entry.begin)};
  }
  file.contents_ = std::move(contents.bytes);
  return file;
}

}  // namespace xlmr::io
