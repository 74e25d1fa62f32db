// WriteSafetensors: the reference writer's layout, written through a temporary file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/safetensors.h"
#include "framework/io/safetensors_internal.h"
#include "nlohmann/json.hpp"

namespace xlmr::io {
namespace {

using Json = nlohmann::ordered_json;  // serialises keys in insertion order

const char* SafetensorsDtypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
    case DType::kI64: return "I64";
  }
  return "?";
}

// Where one tensor goes in the file.
struct PlannedTensor {
  const NamedTensor* source;
  const char* dtype;
  uint64_t begin;
  uint64_t end;
};

absl::Status CheckUtf8(const std::string& path, absl::string_view what, absl::string_view text) {
  if (FirstInvalidUtf8Byte(text) == absl::string_view::npos) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, " is not valid UTF-8"));
}

absl::Status CheckTensors(const std::string& path, const std::vector<NamedTensor>& tensors) {
  absl::flat_hash_set<absl::string_view> seen;
  for (const NamedTensor& named : tensors) {
    const std::string where = absl::StrCat(" (tensor '", named.name, "')");
    XLMR_RETURN_IF_ERROR(CheckUtf8(path, "a tensor name", named.name));
    if (named.name == kMetadataKey) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": the tensor name is reserved for metadata", where));
    }
    if (!seen.insert(named.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": two tensors have this name", where));
    }
    if (!named.tensor.defined()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": the tensor is undefined", where));
    }
    if (!named.ranges.empty() && named.tensor.rank() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": element ranges of a tensor that is not 1-D", where));
    }
    for (const ElementRange& range : named.ranges) {
      if (range.offset < 0 || range.size < 0 || range.offset + range.size > named.tensor.numel()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": element range [", range.offset, ", ",
                                                       range.offset + range.size, ") outside the tensor", where));
      }
    }
  }
  return absl::OkStatus();
}

// What the file holds of `named`: its elements (all, or its ranges back to back).
int64_t StoredElements(const NamedTensor& named) {
  if (named.ranges.empty()) return named.tensor.numel();
  int64_t elements = 0;
  for (const ElementRange& range : named.ranges) elements += range.size;
  return elements;
}

uint64_t StoredBytes(const NamedTensor& named) {
  return static_cast<uint64_t>(StoredElements(named)) * SizeOf(named.tensor.dtype());
}

Shape StoredShape(const NamedTensor& named) {
  return named.ranges.empty() ? named.tensor.shape() : Shape{StoredElements(named)};
}

// The reference order: descending dtype rank, then name (bytewise); offsets contiguous from 0.
std::vector<PlannedTensor> PlanLayout(const std::vector<NamedTensor>& tensors) {
  std::vector<PlannedTensor> plan;
  for (const NamedTensor& named : tensors) {
    plan.push_back({&named, SafetensorsDtypeName(named.tensor.dtype()), 0, 0});
  }
  std::sort(plan.begin(), plan.end(), [](const PlannedTensor& a, const PlannedTensor& b) {
    const int rank_a = SafetensorsDtypeRank(a.dtype);
    const int rank_b = SafetensorsDtypeRank(b.dtype);
    if (rank_a != rank_b) return rank_a > rank_b;
    return a.source->name < b.source->name;
  });
  uint64_t offset = 0;
  for (PlannedTensor& planned : plan) {
    planned.begin = offset;
    offset += StoredBytes(*planned.source);
    planned.end = offset;
  }
  return plan;
}

// The header exactly as serde_json::to_string writes it, padded with spaces to a multiple of 8
// so that the data buffer starts 8-byte aligned.
std::string HeaderText(const std::map<std::string, std::string>& metadata,
                       const std::vector<PlannedTensor>& plan) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json entries = Json::object();
    for (const auto& [key, value] : metadata) entries[key] = value;
    header[kMetadataKey] = std::move(entries);
  }
  for (const PlannedTensor& planned : plan) {
    Json shape = Json::array();
    for (int64_t size : StoredShape(*planned.source))
      shape.push_back(static_cast<uint64_t>(size));
    Json entry = Json::object();
    entry["dtype"] = planned.dtype;
    entry["shape"] = std::move(shape);
    entry["data_offsets"] = Json::array({planned.begin, planned.end});
    header[planned.source->name] = std::move(entry);
  }
  std::string text = header.dump();  // compact; UTF-8 checked beforehand, so it cannot throw
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

absl::Status WriteAll(int fd, const void* data, size_t size, const std::string& path) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = write(fd, bytes, std::min<size_t>(size, size_t{1} << 30));
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": write failed"));
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

// Writes `count` stored bytes of a tensor from byte `begin`; device tensors are staged through
// host memory.
absl::Status WriteTensorBytes(int fd, const Tensor& tensor, size_t begin, size_t count,
                              const std::string& path) {
  const uint8_t* bytes = static_cast<const uint8_t*>(tensor.raw_data()) + begin;
  if (tensor.device() == Device::kCpu) return WriteAll(fd, bytes, count, path);
  std::vector<uint8_t> host(count);
  CopyBytes(host.data(), Device::kCpu, bytes, tensor.device(), count);
  return WriteAll(fd, host.data(), count, path);
}

// Writes what the file holds of `named` (StoredBytes).
absl::Status WriteStored(int fd, const NamedTensor& named, const std::string& path) {
  const Tensor& tensor = named.tensor;
  if (named.ranges.empty()) return WriteTensorBytes(fd, tensor, 0, tensor.bytes(), path);
  const size_t element = SizeOf(tensor.dtype());
  for (const ElementRange& range : named.ranges) {
    XLMR_RETURN_IF_ERROR(WriteTensorBytes(fd, tensor, static_cast<size_t>(range.offset) * element,
                                          static_cast<size_t>(range.size) * element, path));
  }
  return absl::OkStatus();
}

absl::Status WriteContents(int fd, const std::string& header,
                           const std::vector<PlannedTensor>& plan, const std::string& path) {
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i));
  XLMR_RETURN_IF_ERROR(WriteAll(fd, length, sizeof length, path));
  XLMR_RETURN_IF_ERROR(WriteAll(fd, header.data(), header.size(), path));
  for (const PlannedTensor& planned : plan) {
    XLMR_RETURN_IF_ERROR(WriteStored(fd, *planned.source, path));
  }
  // Reach the disk before the rename makes the file visible under its final name.
  if (fsync(fd) != 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": fsync failed"));
  return absl::OkStatus();
}

absl::Status WriteNewFile(const std::string& path, const std::string& header,
                          const std::vector<PlannedTensor>& plan) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot create"));
  absl::Status status = WriteContents(fd, header, plan, path);
  if (close(fd) != 0 && status.ok()) {
    status = absl::ErrnoToStatus(errno, absl::StrCat(path, ": close failed"));
  }
  return status;
}

}  // namespace

absl::Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  for (const auto& [key, value] : metadata) {
    XLMR_RETURN_IF_ERROR(CheckUtf8(path, absl::StrCat("metadata key '", key, "'"), key));
    XLMR_RETURN_IF_ERROR(CheckUtf8(path, absl::StrCat("metadata value of '", key, "'"), value));
  }
  XLMR_RETURN_IF_ERROR(CheckTensors(path, tensors));
  const std::vector<PlannedTensor> plan = PlanLayout(tensors);
  const std::string header = HeaderText(metadata, plan);

  const std::string temp_path = path + ".tmp";
  absl::Status status = WriteNewFile(temp_path, header, plan);
  if (status.ok() && std::rename(temp_path.c_str(), path.c_str()) != 0) {
    status =
        absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot rename ", temp_path, " to it"));
  }
  if (!status.ok()) unlink(temp_path.c_str());  // may not exist; nothing else to undo
  return status;
}

}  // namespace xlmr::io
