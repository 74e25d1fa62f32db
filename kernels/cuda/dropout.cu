#include "kernels/cuda/dropout.h"

#include "framework/core/check.h"
#include "kernels/common/dropout_scale.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"
#include "kernels/cuda/philox_device.cuh"

namespace xlmr::kernels::cuda {
namespace {

// One thread per Philox block of four elements (one Philox call yields all four words), grid
// stride over the blocks. The last block may be partial.
__global__ void DropoutKernel(FloatsIn x, FloatsOut y, int64_t count, float p, float scale,
                              DropoutSite site) {
  const int64_t blocks = (count + 3) / 4;
  for (int64_t block = GridStrideBegin(); block < blocks; block += GridStride()) {
    const uint4 words = DropoutBlockWords(site, static_cast<uint32_t>(block));
    const uint32_t word[4] = {words.x, words.y, words.z, words.w};
    const int64_t first = block * 4;
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t i = first + lane;
      if (i >= count) break;
      const bool keep = UniformFromWordDevice(word[lane]) >= p;
      y.Store(i, keep ? __fmul_rn(x[i], scale) : 0.0f);
    }
  }
}

// One thread per element, grid stride: element (r, c) draws word (index % 4) of Philox block
// index / 4, index = row_slots[r] * width + c. A row's mask need not start on a block boundary
// (width % 4 != 0), so each element takes its own block's words: up to 4x the Philox work of
// DropoutKernel, for a kernel that stays memory-bound.
__global__ void DropoutRowsKernel(FloatsIn x, FloatsOut y, const int32_t* __restrict__ row_slots,
                                  int64_t count, int64_t width, float p, float scale,
                                  DropoutSite site) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
    const int64_t index = int64_t{row_slots[i / width]} * width + i % width;
    const uint4 words = DropoutBlockWords(site, static_cast<uint32_t>(index / 4));
    const uint32_t word[4] = {words.x, words.y, words.z, words.w};
    const bool keep = UniformFromWordDevice(word[index % 4]) >= p;
    y.Store(i, keep ? __fmul_rn(x[i], scale) : 0.0f);
  }
}

// DropoutRowsKernel when width % 4 == 0 (every hidden and intermediate width of the models):
// each row's mask starts on a Philox block boundary, so one thread takes four elements of a
// row from one Philox call, as DropoutKernel does. The same mask and bits.
__global__ void DropoutRowBlocksKernel(FloatsIn x, FloatsOut y, const int32_t* __restrict__ row_slots,
                                       int64_t count, int64_t width, float p, float scale,
                                       DropoutSite site) {
  const int64_t blocks = count / 4;
  for (int64_t block = GridStrideBegin(); block < blocks; block += GridStride()) {
    const int64_t first = block * 4;
    const int64_t index = int64_t{row_slots[first / width]} * width + first % width;
    const uint4 words = DropoutBlockWords(site, static_cast<uint32_t>(index / 4));
    const uint32_t word[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const bool keep = UniformFromWordDevice(word[lane]) >= p;
      y.Store(first + lane, keep ? __fmul_rn(x[first + lane], scale) : 0.0f);
    }
  }
}

}  // namespace

Tensor DropoutApplyRows(const Tensor& x, float p, const DropoutKey& key, const Tensor& row_slots,
                        int64_t num_slots) {
  XLMR_CHECK(p > 0.0f && p < 1.0f) << "cuda::DropoutApplyRows: p must be in (0, 1), is " << p;
  XLMR_CHECK(row_slots.device() == Device::kCuda && row_slots.dtype() == DType::kI32)
      << "cuda::DropoutApplyRows: row_slots must be i32 on cuda";
  const int64_t rows = row_slots.numel();
  const int64_t width = rows == 0 ? 0 : x.numel() / rows;
  XLMR_CHECK(num_slots * width <= kMaxDropoutElements)
      << "cuda::DropoutApplyRows: " << num_slots << " slots of " << width
      << " exceed the dropout counter range";
  const DropoutSite site = DropoutSiteOf(key);
  Tensor y = Tensor::Empty(x.shape(), x.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = x.numel();
  if (count == 0) return y;
  const FloatsIn in = ReadFloats(x, "cuda::DropoutApplyRows x");
  const FloatsOut out = WriteFloats(y, "cuda::DropoutApplyRows y");
  if (width % 4 == 0) {
    DropoutRowBlocksKernel<<<GridStrideBlocks(count / 4), kThreadsPerBlock, 0, ComputeStream()>>>(
        in, out, row_slots.data<int32_t>(), count, width, p, DropoutScale(p), site);
  } else {
    DropoutRowsKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
        in, out, row_slots.data<int32_t>(), count, width, p, DropoutScale(p), site);
  }
  KERNEL_LAUNCH_CHECK();
  return y;
}

Tensor DropoutApply(const Tensor& x, float p, const DropoutKey& key) {
  XLMR_CHECK(p > 0.0f && p < 1.0f) << "cuda::DropoutApply: p must be in (0, 1), is " << p;
  XLMR_CHECK(x.numel() <= kMaxDropoutElements)
      << "cuda::DropoutApply: " << x.numel() << " elements exceed the dropout counter range";
  const DropoutSite site = DropoutSiteOf(key);  // checks layer and op, before any launch
  // Every element is stored, dropped ones as an explicit 0.
  Tensor y = Tensor::Empty(x.shape(), x.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = x.numel();
  if (count == 0) return y;
  const int64_t philox_blocks = (count + 3) / 4;
  DropoutKernel<<<GridStrideBlocks(philox_blocks), kThreadsPerBlock, 0, ComputeStream()>>>(
      ReadFloats(x, "cuda::DropoutApply x"), WriteFloats(y, "cuda::DropoutApply y"), count, p,
      DropoutScale(p), site);
  KERNEL_LAUNCH_CHECK();
  return y;
}

}  // namespace xlmr::kernels::cuda
