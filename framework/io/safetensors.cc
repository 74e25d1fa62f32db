// ReadSafetensors: reads a whole file and validates it in the reference reader's order
// (steps 1-3 and 5-6 here; step 4, the header itself, in safetensors_header.cc).
#include "framework/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/safetensors_internal.h"

namespace xlmr::io {
namespace {

// The reference's MAX_HEADER_SIZE: a larger length is taken as a corrupt or hostile file.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

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

// ---- Validating the layout --------------------------------------------------------------------

// Bytes that `entry`'s shape and dtype need, with the reference's overflow and whole-byte checks.
absl::StatusOr<uint64_t> NeededBytes(const std::string& path, const HeaderEntry& entry) {
  uint64_t elements = 1;
  for (int64_t size : entry.shape) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(size), &elements)) {
      return InvalidTensor(
          path,
          absl::StrCat("element count of shape ", ShapeString(entry.shape), " overflows 64 bits"),
          entry.name);
    }
  }
  uint64_t bits = 0;
  if (__builtin_mul_overflow(elements, SafetensorsDtypeBits(entry.dtype), &bits)) {
    return InvalidTensor(path,
                         absl::StrCat("bit size of shape ", ShapeString(entry.shape), " of ",
                                      entry.dtype, " overflows 64 bits"),
                         entry.name);
  }
  if (bits % 8 != 0) {
    return InvalidTensor(path,
                         absl::StrCat("shape ", ShapeString(entry.shape), " of ", entry.dtype,
                                      " is not a whole number of bytes"),
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
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const HeaderEntry* a, const HeaderEntry* b) {
                     return std::make_pair(a->begin, a->end) < std::make_pair(b->begin, b->end);
                   });
  uint64_t start = 0;
  for (const HeaderEntry* entry : by_offset) {
    if (entry->begin != start || entry->end < entry->begin) {
      return InvalidTensor(path, OffsetProblem(*entry, start), entry->name);
    }
    XLMR_ASSIGN_OR_RETURN(const uint64_t needed, NeededBytes(path, *entry));
    if (entry->end - entry->begin != needed) {
      return InvalidTensor(
          path,
          absl::StrCat("data_offsets [", entry->begin, ", ", entry->end, "] hold ",
                       entry->end - entry->begin, " bytes, but shape ", ShapeString(entry->shape),
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
    return Invalid(
        path, absl::StrCat("header length ", length, " goes past the end of the file (",
                           contents.size - kLengthFieldBytes, " bytes follow the length field)"));
  }
  return length;
}

// Step 6 of the reference: the tensors must index the data buffer exactly.
absl::Status CheckDataSize(const std::string& path, uint64_t indexed, uint64_t data_size) {
  if (indexed < data_size) {
    return Invalid(path, absl::StrCat(data_size - indexed,
                                      " trailing bytes after the last tensor"
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
  const absl::string_view header(
      reinterpret_cast<const char*>(contents.bytes.get()) + kLengthFieldBytes, header_size);
  XLMR_ASSIGN_OR_RETURN(ParsedHeader parsed, ParseHeader(path, header));
  XLMR_ASSIGN_OR_RETURN(const uint64_t indexed, ValidateLayout(path, parsed.entries));
  const size_t data_start = kLengthFieldBytes + header_size;
  XLMR_RETURN_IF_ERROR(CheckDataSize(path, indexed, contents.size - data_start));

  SafetensorsFile file;
  file.path_ = path;
  file.metadata_ = std::move(parsed.metadata);
  const uint8_t* data = contents.bytes.get() + data_start;
  for (HeaderEntry& entry : parsed.entries) {
    file.names_.push_back(entry.name);
    file.tensors_[entry.name] =
        SafetensorsTensor{std::move(entry.dtype), std::move(entry.shape),
                          absl::Span<const uint8_t>(data + entry.begin, entry.end - entry.begin)};
  }
  file.contents_ = std::move(contents.bytes);
  return file;
}

}  // namespace xlmr::io
