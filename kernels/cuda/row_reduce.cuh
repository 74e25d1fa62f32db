// Block-wide reductions of one float per thread, for kernels that give a row to a block.
// Device code only; include from .cu files.
#ifndef XLMR_KERNELS_CUDA_ROW_REDUCE_CUH_
#define XLMR_KERNELS_CUDA_ROW_REDUCE_CUH_

namespace xlmr::kernels::cuda {

// The reduction of `value` over the block, combined in a fixed order (warp shuffles, then the
// warps' partials in warp order), so every thread gets the same, deterministic result.
// Requires blockDim.x == 32 * kWarps and `shared` to hold kWarps floats.
template <int kWarps, typename Combine>
__device__ float RowReduce(float value, Combine combine, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  __syncthreads();  // `shared` may still be read by the previous reduction
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = value;
  __syncthreads();
  value = shared[0];
  for (int w = 1; w < kWarps; ++w) value = combine(value, shared[w]);
  return value;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_ROW_REDUCE_CUH_
