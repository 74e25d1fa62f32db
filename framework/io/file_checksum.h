// CRC32C (Castagnoli) checksums of bytes and of files, as the checkpoint manifest records them
// (framework/io/file_manifest.h). CRC32C because it is the fastest checksum to compute on
// multi-GB files (Intel ISA-L's PCLMULQDQ folding: ~8.5 GB/s on one core here, SHA-256 with
// the SHA extensions ~1.9 GB/s) and it detects every error of up to 32 consecutive bits (any
// single flipped bit among them); it guards against storage and copy errors, not against
// someone who wants to forge a file (docs/DECISIONS.md).
#ifndef XLMR_FRAMEWORK_IO_FILE_CHECKSUM_H_
#define XLMR_FRAMEWORK_IO_FILE_CHECKSUM_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace xlmr::io {

// The standard CRC32C of `size` bytes (RFC 3720; "123456789" gives 0xe3069283).
uint32_t Crc32c(const void* data, size_t size);

// Continues a CRC32C: Crc32cExtend(Crc32c(a), b) == Crc32c(a followed by b).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

struct FileChecksum {
  uint64_t size = 0;
  uint32_t crc32c = 0;
};

// The size and CRC32C of the regular file at `path`, read once. The file is mapped and summed
// in 64 MiB windows while a helper thread has the kernel read the next window into the page
// cache (readahead(2)), so that from disk the sum overlaps large reads and from the page cache
// no copy is made: it takes less time than reading the file once with read()
// (bench/checkpoint_io_bench.cc). Errors name the path (NotFound, or the system's reason).
// The file must not shrink while it is summed (a mapped page past the new end would fault):
// a run's directories have one writer.
absl::StatusOr<FileChecksum> ChecksumFile(const std::string& path);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_FILE_CHECKSUM_H_
