// Reading and writing floating tensors (f32, f16, bf16) of the CPU backend as float.
//
// The CPU backend's numerics contract: read every element exactly into fp32, compute in fp32,
// round once to the output dtype on write. These helpers are the read and the write; kernels
// stream through them in chunks of kFloatChunk elements (a stack buffer), or take a whole
// f32 view with AsF32 when a BLAS call needs one.
#ifndef XLMR_KERNELS_CPU_FLOAT_ACCESS_H_
#define XLMR_KERNELS_CPU_FLOAT_ACCESS_H_

#include <algorithm>
#include <cstdint>

#include "framework/tensor/half.h"
#include "framework/tensor/tensor.h"
#include "kernels/cpu/parallel.h"

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

// `value` after a round trip through storage of `dtype` (the roundings torch does on fp16 or
// bf16 intermediates under autocast); identity for f32.
inline float StoredAs(DType dtype, float value) {
  switch (dtype) {
    case DType::kF16: return HalfToFloat(FloatToHalf(value));
    case DType::kBF16: return BFloat16ToFloat(FloatToBFloat16(value));
    default: return value;
  }
}

// A new zeroed f32 CPU buffer for a result that becomes an op's output of `final_dtype`:
// counted as activations when it is returned as is (f32), as workspace when it is only rounded
// into the output (RoundToDType).
inline Tensor F32Result(const Shape& shape, DType final_dtype) {
  return Tensor::Zeros(
      shape, DType::kF32, Device::kCpu,
      final_dtype == DType::kF32 ? MemoryCategory::kActivations : MemoryCategory::kWorkspace);
}

// F32Result without the zeroing, for a kernel that writes every element itself (a GEMM with
// beta 0, a row-by-row kernel): zeroing first would be one more pass over the result, and it
// ran on the calling thread alone.
inline Tensor F32Output(const Shape& shape, DType final_dtype) {
  return Tensor::Empty(
      shape, DType::kF32, Device::kCpu,
      final_dtype == DType::kF32 ? MemoryCategory::kActivations : MemoryCategory::kWorkspace);
}

// Elements [begin, begin + count) of src as floats, for reading only: a pointer into src itself
// when it is f32 (no copy), otherwise `scratch` (room for count floats) filled by LoadFloats.
inline const float* FloatsOf(const Tensor& src, int64_t begin, int64_t count, float* scratch) {
  if (src.dtype() == DType::kF32) return src.data<float>() + begin;
  LoadFloats(src, begin, count, scratch);
  return scratch;
}

// [in] values: `count` floats. [out] dst: elements [begin, begin + count) are set to the values,
// each rounded once (to nearest even) to dst's floating dtype; fp16 overflow becomes +-inf.
void StoreFloats(const float* values, int64_t begin, int64_t count, Tensor* dst);

// Elements per ParallelFor range of a streaming kernel (16 chunks): enough work to be worth
// handing to another thread even for a cheap body such as an addition.
inline constexpr int64_t kParallelGrain = 16 * kFloatChunk;

// Rows of `width` elements per ParallelFor range of a row-wise kernel: about kParallelGrain
// elements.
inline int64_t RowGrain(int64_t width) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, width));
}

// Columns a column-wise reduction sums together while the rows stream past (a whole cache line
// of floats per row).
inline constexpr int64_t kColumnBlock = 16;

// Columns per ParallelFor range of a per-column sum over `rows` rows: about kParallelGrain
// elements, in whole kColumnBlocks.
inline int64_t ColumnGrain(int64_t rows) {
  const int64_t columns = kParallelGrain / std::max<int64_t>(1, rows);
  return std::max<int64_t>(1, columns / kColumnBlock) * kColumnBlock;
}

// As ForEachChunk, except that ranges of chunks run at the same time on several threads
// (parallel.h) and in no particular order: fn(begin, count) may read anything but must write
// only elements [begin, begin + count) of its outputs, and keep its buffers on its own stack.
template <typename Fn>
void ParallelForEachChunk(int64_t n, const Fn& fn) {
  ParallelFor(n, kParallelGrain, [&fn](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; chunk += kFloatChunk) {
      fn(chunk, std::min(kFloatChunk, end - chunk));
    }
  });
}

// The values of a CPU floating tensor as f32 of the same shape: `t` itself (shared, no copy)
// when it already is f32, otherwise an exact converted copy counted as kWorkspace memory.
Tensor AsF32(const Tensor& t);

// `t_f32` rounded once to `dtype`: `t_f32` itself when dtype is f32, otherwise a new
// kActivations tensor of the same shape.
Tensor RoundToDType(const Tensor& t_f32, DType dtype);

// Returns f(a) elementwise (f: float -> float, run in fp32), rounded once to out_dtype, as a new
// kActivations tensor of a's shape (allocated uninitialised: every element is written). f runs on several threads at once: it must be a pure
// function of its arguments.
template <typename Fn>
Tensor MapElements(const Tensor& a, DType out_dtype, Fn f) {
  Tensor out = Tensor::Empty(a.shape(), out_dtype, a.device(), MemoryCategory::kActivations);
  if (a.dtype() == DType::kF32 && out_dtype == DType::kF32) {  // no conversions to stream through
    const float* x = a.data<float>();
    float* y = out.data<float>();
    ParallelFor(a.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
    });
    return out;
  }
  ParallelForEachChunk(a.numel(), [&](int64_t begin, int64_t count) {
    float in[kFloatChunk];
    LoadFloats(a, begin, count, in);
    for (int64_t i = 0; i < count; ++i) in[i] = f(in[i]);
    StoreFloats(in, begin, count, &out);
  });
  return out;
}

// Returns f(a, b) elementwise for same-shape floating a and b (run in fp32), rounded once to
// out_dtype, as a new kActivations tensor of a's shape. f must be pure, as above.
template <typename Fn>
Tensor MapElements(const Tensor& a, const Tensor& b, DType out_dtype, Fn f) {
  Tensor out = Tensor::Empty(a.shape(), out_dtype, a.device(), MemoryCategory::kActivations);
  if (a.dtype() == DType::kF32 && b.dtype() == DType::kF32 && out_dtype == DType::kF32) {
    const float* x = a.data<float>();
    const float* z = b.data<float>();
    float* y = out.data<float>();
    ParallelFor(a.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = f(x[i], z[i]);
    });
    return out;
  }
  ParallelForEachChunk(a.numel(), [&](int64_t begin, int64_t count) {
    float in_a[kFloatChunk], in_b[kFloatChunk];
    LoadFloats(a, begin, count, in_a);
    LoadFloats(b, begin, count, in_b);
    for (int64_t i = 0; i < count; ++i) in_a[i] = f(in_a[i], in_b[i]);
    StoreFloats(in_a, begin, count, &out);
  });
  return out;
}

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_FLOAT_ACCESS_H_
