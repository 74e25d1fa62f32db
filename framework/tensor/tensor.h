// Tensor: a typed, shaped, contiguous (row-major) view into a Storage.
//
// Tensors are cheap handles: copying one shares the storage. Views (View, Reshaped) let
// parameters and gradients live inside one flat buffer. All tensors are contiguous; ops that
// need transposes do them explicitly. Shapes are int64 dimensions, outermost first.
#ifndef XLMR_FRAMEWORK_TENSOR_TENSOR_H_
#define XLMR_FRAMEWORK_TENSOR_TENSOR_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/check.h"
#include "framework/core/device.h"
#include "framework/tensor/dtype.h"
#include "framework/tensor/half.h"
#include "framework/tensor/storage.h"

namespace xlmr {

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
std::string ShapeString(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;  // an empty handle: defined() is false

  // A new zero-filled tensor. The default, and the safe choice for any new tensor.
  static Tensor Zeros(const Shape& shape, DType dtype, Device device = Device::kCpu,
                      MemoryCategory category = MemoryCategory::kActivations);

  // A new tensor whose contents are unspecified: like Zeros (same shape, dtype, device, bytes
  // and MemoryStats category) minus the fill, which on the GPU is a memset over the whole
  // buffer. Contract: only for a tensor that the code creating it overwrites completely (every
  // element) before anything reads it, e.g. a GEMM output with beta = 0, an elementwise
  // kernel's result or a copy's destination. A tensor that is accumulated into (+=, beta = 1,
  // atomics), written only in part (rows left at zero) or possibly read first must come from
  // Zeros.
  static Tensor Empty(const Shape& shape, DType dtype, Device device, MemoryCategory category);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i < 0 ? shape_.size() + i : i]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return NumElements(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * SizeOf(dtype_); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // Offset of the first element inside the storage, in bytes.
  size_t byte_offset() const { return byte_offset_; }

  void* raw_data() const { return static_cast<char*>(storage_->data()) + byte_offset_; }
  // Typed pointer; checks that T matches the dtype (Half/BFloat16 for 16-bit floats).
  template <typename T>
  T* data() const;

  // A view of `shape` starting `element_offset` elements into this tensor's data (same
  // dtype); the view must fit inside this tensor.
  Tensor View(int64_t element_offset, const Shape& shape) const;
  // The same data with another shape of equal element count.
  Tensor Reshaped(const Shape& shape) const;
  // Rows [begin, end) of the outermost dimension.
  Tensor Slice(int64_t begin, int64_t end) const;

  // Host-side access for tests and I/O (copies from device memory when needed).
  std::vector<float> ToFloatVector() const;                 // any floating dtype
  void CopyFromFloats(const std::vector<float>& values);    // rounds to the dtype
  Tensor ToDevice(Device device, MemoryCategory category = MemoryCategory::kActivations) const;

 private:
  // A tensor of `shape` and `dtype` over the whole of `storage` (of exactly its bytes).
  static Tensor OverStorage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype);

  std::shared_ptr<Storage> storage_;
  size_t byte_offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::kF32;
};

// Host<->device byte copies, dispatching on the devices involved. The CUDA backend registers
// its implementation; with CPU on both sides this is memcpy.
using CopyBytesFn = void (*)(void* dst, Device dst_device, const void* src, Device src_device,
                             size_t bytes);
void RegisterDeviceCopy(CopyBytesFn copy);
void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

template <typename T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::kF16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBF16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kI64; };

template <typename T>
T* Tensor::data() const {
  XLMR_CHECK(defined()) << "data() of an empty tensor";
  XLMR_CHECK(DTypeOf<T>::value == dtype_)
      << "tensor is " << DTypeName(dtype_) << ", accessed as " << DTypeName(DTypeOf<T>::value);
  return static_cast<T*>(raw_data());
}

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_TENSOR_H_
