#include "framework/tensor/tensor.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_join.h"
#include "framework/profile/profiler.h"

namespace xlmr {
namespace {

CopyBytesFn& RegisteredCopy() {
  static CopyBytesFn copy = nullptr;
  return copy;
}

// The bytes of a new contiguous tensor; checks that no dimension is negative.
size_t BytesOf(const Shape& shape, DType dtype) {
  for (int64_t d : shape) XLMR_CHECK(d >= 0) << "negative dimension in " << ShapeString(shape);
  return static_cast<size_t>(NumElements(shape)) * SizeOf(dtype);
}

}  // namespace

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const Shape& shape) { return "[" + absl::StrJoin(shape, ", ") + "]"; }

void RegisterDeviceCopy(CopyBytesFn copy) { RegisteredCopy() = copy; }

void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device == Device::kCpu && src_device == Device::kCpu) {
    std::memcpy(dst, src, bytes);
    return;
  }
  XLMR_CHECK(RegisteredCopy() != nullptr) << "device copy requested but no CUDA backend registered";
  profile::OpScope op("transfer", profile::OpKind::kOther, static_cast<int64_t>(bytes));
  RegisteredCopy()(dst, dst_device, src, src_device, bytes);
}

Tensor Tensor::Zeros(const Shape& shape, DType dtype, Device device, MemoryCategory category) {
  const size_t bytes = BytesOf(shape, dtype);
  return OverStorage(Storage::Allocate(device, bytes, category), shape, dtype);
}

Tensor Tensor::Empty(const Shape& shape, DType dtype, Device device, MemoryCategory category) {
  const size_t bytes = BytesOf(shape, dtype);
  return OverStorage(Storage::AllocateUninitialized(device, bytes, category), shape, dtype);
}

Tensor Tensor::OverStorage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype) {
  Tensor t;
  t.storage_ = std::move(storage);
  t.shape_ = shape;
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::View(int64_t element_offset, const Shape& shape) const {
  XLMR_CHECK(defined());
  XLMR_CHECK(element_offset >= 0 && element_offset + NumElements(shape) <= numel())
      << "view " << ShapeString(shape) << " at " << element_offset << " outside "
      << ShapeString(shape_);
  Tensor t = *this;
  t.byte_offset_ = byte_offset_ + static_cast<size_t>(element_offset) * SizeOf(dtype_);
  t.shape_ = shape;
  return t;
}

Tensor Tensor::Reshaped(const Shape& shape) const {
  XLMR_CHECK_EQ(NumElements(shape), numel()) << ShapeString(shape_) << " -> " << ShapeString(shape);
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  XLMR_CHECK(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0]);
  Shape shape = shape_;
  shape[0] = end - begin;
  return View(begin * (numel() / (shape_[0] == 0 ? 1 : shape_[0])), shape);
}

std::vector<float> Tensor::ToFloatVector() const {
  const Tensor host = device() == Device::kCpu ? *this : ToDevice(Device::kCpu);
  std::vector<float> out(static_cast<size_t>(numel()));
  switch (dtype_) {
    case DType::kF32:
      if (!out.empty()) std::memcpy(out.data(), host.raw_data(), bytes());
      break;
    case DType::kF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = HalfToFloat(host.data<Half>()[i]);
      break;
    case DType::kBF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = BFloat16ToFloat(host.data<BFloat16>()[i]);
      break;
    case DType::kI32:
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(host.data<int32_t>()[i]);
      break;
    case DType::kI64:
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(host.data<int64_t>()[i]);
      break;
  }
  return out;
}

void Tensor::CopyFromFloats(const std::vector<float>& values) {
  XLMR_CHECK_EQ(static_cast<int64_t>(values.size()), numel());
  Tensor host = device() == Device::kCpu ? *this : Zeros(shape_, dtype_, Device::kCpu);
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dtype_) {
      case DType::kF32: host.data<float>()[i] = values[i]; break;
      case DType::kF16: host.data<Half>()[i] = FloatToHalf(values[i]); break;
      case DType::kBF16: host.data<BFloat16>()[i] = FloatToBFloat16(values[i]); break;
      case DType::kI32: host.data<int32_t>()[i] = static_cast<int32_t>(values[i]); break;
      case DType::kI64: host.data<int64_t>()[i] = static_cast<int64_t>(values[i]); break;
    }
  }
  if (device() != Device::kCpu) CopyBytes(raw_data(), device(), host.raw_data(), Device::kCpu, bytes());
}

Tensor Tensor::ToDevice(Device device, MemoryCategory category) const {
  Tensor out = Empty(shape_, dtype_, device, category);  // every byte is copied over
  CopyBytes(out.raw_data(), device, raw_data(), this->device(), bytes());
  return out;
}

}  // namespace xlmr
