// Reading and writing floating tensors (f32, f16, bf16) of the CPU backend as float.
//
// The CPU backend's numerics contract: read every element exactly into fp32, compute in fp32,
// round once to the output dtype on write. These helpers are the read and the write; kernels
// stream through them in chunks of kFloatChunk elements (a stack buffer), or take a whole
// f32 view with AsF32 when a BLAS call needs one.
#ifndef XLMR_KERNELS_CPU_FLOAT_ACCESS_H_
#define XLMR_KERNELS_CPU_FLOAT_ACCESS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// Elements per chunk when a kernel streams a tensor through a float buffer on the stack.
inline constexpr int64_t kFloatChunk = 1024;

// Calls fn(begin, count) for consecutive chunks [begin, begin + count) of at most kFloatChunk
// elements that cover [0, n) in order.
template <typename Fn>
void ForEachChunk(int64_t n, Fn&& fn) {
  for (int64_t begin = 0; begin < n; begin += kFloatChunk) {
    fn(begin, n - begin < kFloatChunk ? n - begin : kFloatChunk);
  }
}

// [in] src: a CPU tensor of a floating dtype. [out] out: `count` floats, the exact values of
// elements [begin, begin + count) of src (flat, row-major index).
void LoadFloats(const Tensor& src, int64_t begin, int64_t count, float* out);

// [in] values: `count` floats. [out] dst: elements [begin, begin + count) are set to the values,
// each rounded once (to nearest even) to dst's floating dtype; fp16 overflow becomes +-inf.
void StoreFloats(const float* values, int64_t begin, int64_t count, Tensor* dst);

// The values of a CPU floating tensor as f32 of the same shape: `t` itself (shared, no copy)
// when it already is f32, otherwise an exact converted copy counted as kWorkspace memory.
Tensor AsF32(const Tensor& t);

// `t_f32` rounded once to `dtype`: `t_f32` itself when dtype is f32, otherwise a new
// kActivations tensor of the same shape.
Tensor RoundToDType(const Tensor& t_f32, DType dtype);

// Returns f(a) elementwise (f: float -> float, run in fp32), rounded once to out_dtype, as a new
// kActivations tensor of a's shape.
template <typename Fn>
Tensor MapElements(const Tensor& a, DType out_dtype, Fn f) {
  Tensor out = Tensor::Zeros(a.shape(), out_dtype, a.device(), MemoryCategory::kActivations);
  float in[kFloatChunk];
  ForEachChunk(a.numel(), [&](int64_t begin, int64_t count) {
    LoadFloats(a, begin, count, in);
    for (int64_t i = 0; i < count; ++i) in[i] = f(in[i]);
    StoreFloats(in, begin, count, &out);
  });
  return out;
}

// Returns f(a, b) elementwise for same-shape floating a and b (run in fp32), rounded once to
// out_dtype, as a new kActivations tensor of a's shape.
template <typename Fn>
Tensor MapElements(const Tensor& a, const Tensor& b, DType out_dtype, Fn f) {
  Tensor out = Tensor::Zeros(a.shape(), out_dtype, a.device(), MemoryCategory::kActivations);
  float in_a[kFloatChunk], in_b[kFloatChunk];
  ForEachChunk(a.numel(), [&](int64_t begin, int64_t count) {
    LoadFloats(a, begin, count, in_a);
    LoadFloats(b, begin, count, in_b);
    for (int64_t i = 0; i < count; ++i) in_a[i] = f(in_a[i], in_b[i]);
    StoreFloats(in_a, begin, count, &out);
  });
  return out;
}

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_FLOAT_ACCESS_H_
