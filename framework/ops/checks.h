// Shape and dtype preconditions shared by the ops' entry points. A failure is a programming
// error in the caller (model code), so these abort via XLMR_CHECK with the op's and the
// argument's names; user input never reaches an op unvalidated.
#ifndef XLMR_FRAMEWORK_OPS_CHECKS_H_
#define XLMR_FRAMEWORK_OPS_CHECKS_H_

#include "framework/core/check.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// An activation (or activation gradient): defined, f32, f16 or bf16 (the autocast dtypes).
inline void CheckActivation(const char* op, const char* name, const Tensor& t) {
  XLMR_CHECK(t.defined()) << op << ": " << name << " is undefined";
  XLMR_CHECK(IsFloating(t.dtype()))
      << op << ": " << name << " must be f32, f16 or bf16, is " << DTypeName(t.dtype());
}

// A defined tensor of exactly `dtype` and `shape`.
inline void CheckTensor(const char* op, const char* name, const Tensor& t, DType dtype,
                        const Shape& shape) {
  XLMR_CHECK(t.defined()) << op << ": " << name << " is undefined";
  XLMR_CHECK(t.dtype() == dtype) << op << ": " << name << " must be " << DTypeName(dtype) << ", is "
                                 << DTypeName(t.dtype());
  XLMR_CHECK(t.shape() == shape) << op << ": " << name << " must have shape " << ShapeString(shape)
                                 << ", has " << ShapeString(t.shape());
}

// Two tensors of the same shape.
inline void CheckSameShape(const char* op, const char* name_a, const Tensor& a, const char* name_b,
                           const Tensor& b) {
  XLMR_CHECK(a.shape() == b.shape())
      << op << ": " << name_a << " " << ShapeString(a.shape()) << " and " << name_b << " "
      << ShapeString(b.shape()) << " must have the same shape";
}

// A matrix of f32 rows, [N, H] (the row ops: normalisation, dot products).
inline void CheckF32Rows(const char* op, const char* name, const Tensor& t) {
  XLMR_CHECK(t.defined() && t.dtype() == DType::kF32 && t.rank() == 2) << op << ": " << name << " must be [N, H] f32";
}

// An output dtype an op may produce: f32, f16 or bf16.
inline void CheckOutputDType(const char* op, DType dtype) {
  XLMR_CHECK(IsFloating(dtype))
      << op << ": output dtype must be f32, f16 or bf16, is " << DTypeName(dtype);
}

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_CHECKS_H_
