// Reading and writing the safetensors checkpoint format (Hugging Face `model.safetensors`).
//
// Layout: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON header, then the data
// buffer. The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}
// (offsets relative to the data buffer) plus an optional "__metadata__" string->string map.
//
// The reader accepts exactly the files the reference Rust reader (huggingface/safetensors,
// `SafeTensors::read_metadata` + `Metadata::validate`) accepts, checked in its order, with
// two deliberate differences, both stricter: a JSON key repeated inside one object (two
// tensors of the same name, a repeated field, a repeated metadata key) is an error instead of
// "last one wins", and a shape entry above 2^63-1 is an error (our shapes are int64).
// The writer produces the same bytes as the reference writer (`safetensors.torch.save_file`)
// for the same tensors and at most one metadata entry (the reference orders several metadata
// entries by hash, i.e. unpredictably; we order them by key).
//
// Example (see tests/framework/io/safetensors_test.cc):
//   XLMR_ASSIGN_OR_RETURN(io::SafetensorsFile file, io::ReadSafetensors(dir +
//   "/model.safetensors")); XLMR_ASSIGN_OR_RETURN(Tensor w, io::ToTensor(file,
//   "classifier.dense.weight", Device::kCuda)); XLMR_RETURN_IF_ERROR(io::WriteSafetensors(out,
//   {{"classifier.dense.weight", w}}, {{"format", "pt"}}));
#ifndef XLMR_FRAMEWORK_IO_SAFETENSORS_H_
#define XLMR_FRAMEWORK_IO_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/core/device.h"
#include "framework/tensor/memory_stats.h"
#include "framework/tensor/tensor.h"

namespace xlmr::io {

// Size in bits of one element of a safetensors dtype ("F32" -> 32, "F4" -> 4, "BOOL" -> 8), or
// 0 when `dtype` is not one of the names of the reference's `Dtype` enum: BOOL, F4, F6_E2M3,
// F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16,
// I32, U32, F32, C64, F64, I64, U64.
int SafetensorsDtypeBits(absl::string_view dtype);

// One tensor of a file, as its header describes it.
struct SafetensorsTensor {
  std::string dtype;  // a name accepted by SafetensorsDtypeBits, e.g. "F32", "BF16", "I64"
  Shape shape;        // outermost first; [] is a scalar (1 element); a 0 dim means no elements
  // The tensor's bytes: little-endian, row-major. Points into the owning SafetensorsFile and
  // is valid while that object lives. NOT aligned: copy out with memcpy, never cast.
  absl::Span<const uint8_t> bytes;
};

// A validated safetensors file held in memory. Move-only (it owns the whole file's bytes).
class SafetensorsFile {
 public:
  SafetensorsFile(SafetensorsFile&&) = default;
  SafetensorsFile& operator=(SafetensorsFile&&) = default;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  // The path it was read from (used in error messages).
  const std::string& path() const { return path_; }
  // The "__metadata__" map; empty when the file has none.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Tensor names in the order the header lists them.
  const std::vector<std::string>& names() const { return names_; }

  bool HasTensor(absl::string_view name) const { return tensors_.contains(name); }
  // The tensor called `name`, or nullptr when the file has none of that name.
  const SafetensorsTensor* Find(absl::string_view name) const;

 private:
  friend absl::StatusOr<SafetensorsFile> ReadSafetensors(const std::string& path);
  SafetensorsFile() = default;

  std::string path_;
  std::unique_ptr<uint8_t[]> contents_;  // the whole file; spans in tensors_ point into it
  std::map<std::string, std::string> metadata_;
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, SafetensorsTensor> tensors_;
};

// Reads `path` completely into memory and validates it. Errors (never a crash, whatever the
// bytes) are one line, "<path>: <what is wrong>[ (tensor '<name>')]": NotFound when the file
// does not exist, InvalidArgument when it is not a valid safetensors file, another code for
// I/O failures.
absl::StatusOr<SafetensorsFile> ReadSafetensors(const std::string& path);

// A new F32 tensor on `device` (allocated under `category`) holding tensor `name` of `file`.
// F32 data is copied; F16 and BF16 data is widened exactly. NotFound when there is no such
// tensor; InvalidArgument for any other source dtype.
absl::StatusOr<Tensor> ToTensor(const SafetensorsFile& file, absl::string_view name,
                                Device device = Device::kCpu,
                                MemoryCategory category = MemoryCategory::kWeights);

// A tensor to write, under its checkpoint name.
// A run of elements [offset, offset + size) of a 1-D tensor.
struct ElementRange {
  int64_t offset = 0;
  int64_t size = 0;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;  // any dtype (F32/F16/BF16/I32/I64), any device; written as it is stored
  // Empty: the whole tensor. Otherwise `tensor` is 1-D and only these ranges are written, back
  // to back, as a 1-D tensor of their total length: the packed form of a padded flat buffer
  // (ParameterStore's optimizer moments), written without a packed copy in memory.
  std::vector<ElementRange> ranges;
};

// Writes `tensors` and `metadata` to `path` in the reference writer's layout: tensors sorted by
// descending dtype rank (the reference's enum order: I64, F32, I32, BF16, F16 for ours) and
// then by name, data offsets contiguous from 0, header `{"__metadata__": {...}, tensors...}`
// (no "__metadata__" key when `metadata` is empty) padded with spaces to a multiple of 8.
// The file is written to "<path>.tmp", flushed to disk and renamed over `path`, so `path` is
// either the old file or the complete new one; on failure no temporary file is left.
// InvalidArgument for an undefined tensor, a repeated name, the reserved name "__metadata__"
// or a name/metadata string that is not valid UTF-8.
absl::Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_SAFETENSORS_H_
