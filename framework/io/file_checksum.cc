#include "framework/io/file_checksum.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <future>

#include "absl/strings/str_cat.h"
#include "isa-l/crc.h"

namespace xlmr::io {
namespace {

constexpr size_t kWindowBytes = size_t{64} << 20;

// ISA-L's crc32_iscsi takes an int length and works on the unreflected register: the standard
// value is its result for the initial register ~0, inverted.
uint32_t ExtendRegister(uint32_t reg, const uint8_t* bytes, size_t size) {
  constexpr size_t kMaxChunk = size_t{1} << 30;
  while (size > 0) {
    const size_t chunk = std::min(size, kMaxChunk);
    reg = crc32_iscsi(const_cast<uint8_t*>(bytes), static_cast<int>(chunk), reg);
    bytes += chunk;
    size -= chunk;
  }
  return reg;
}

absl::Status PathError(const std::string& path, const char* what) {
  return absl::ErrnoToStatus(errno, absl::StrCat(path, ": ", what));
}

// Unmaps on every path out of ChecksumFile.
struct Unmapper {
  void* address;
  size_t size;
  ~Unmapper() { munmap(address, size); }
};

// Closes a descriptor on every path out of ChecksumFile.
struct FdCloser {
  int fd;
  ~FdCloser() { close(fd); }
};

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size) {
  return ~ExtendRegister(~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t Crc32c(const void* data, size_t size) { return Crc32cExtend(0, data, size); }

absl::StatusOr<FileChecksum> ChecksumFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PathError(path, "cannot open");
  FdCloser closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) return PathError(path, "cannot stat");
  if (!S_ISREG(info.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  FileChecksum result;
  result.size = static_cast<uint64_t>(info.st_size);
  if (result.size == 0) return result;
  void* mapped = mmap(nullptr, result.size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return PathError(path, "cannot map");
  Unmapper unmapper{mapped, result.size};
  const uint8_t* bytes = static_cast<const uint8_t*>(mapped);
  // The kernel reads a window ahead (readahead(2): large requests, into the page cache) on a
  // helper thread while this one sums the mapped window before it: from disk the sum hides
  // behind the reads, from the page cache nothing is copied.
  readahead(fd, 0, kWindowBytes);
  uint32_t reg = ~0u;
  for (uint64_t offset = 0; offset < result.size; offset += kWindowBytes) {
    const uint64_t next = offset + kWindowBytes;
    std::future<void> ahead;
    if (next < result.size) {
      ahead = std::async(std::launch::async, [fd, next] { readahead(fd, static_cast<off64_t>(next), kWindowBytes); });
    }
    reg = ExtendRegister(reg, bytes + offset, static_cast<size_t>(std::min<uint64_t>(kWindowBytes, result.size - offset)));
    if (ahead.valid()) ahead.get();
  }
  result.crc32c = ~reg;
  return result;
}

}  // namespace xlmr::io
