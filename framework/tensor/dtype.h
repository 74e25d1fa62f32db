// Element types a Tensor can hold.
#ifndef XLMR_FRAMEWORK_TENSOR_DTYPE_H_
#define XLMR_FRAMEWORK_TENSOR_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace xlmr {

enum class DType { kF32, kF16, kBF16, kI32, kI64 };

constexpr size_t SizeOf(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
  }
  return 0;
}

constexpr const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "?";
}

constexpr bool IsFloating(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_DTYPE_H_
