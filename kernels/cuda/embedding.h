// CUDA kernels of the embedding lookup (framework/ops/embedding.h, nn.Embedding). Plain C++
// header; the kernels are in embedding.cu.
//
// Same contract as kernels/cpu/embedding.h, with two GPU-specific points:
//  - An id outside [0, V) is a programming error (the data layer validates ids), as on the CPU,
//    but it cannot abort at the call: the kernel prints the id and position and traps, and the
//    next checked CUDA call (CUDA_CHECK) aborts with the launch failure.
//  - The backward is deterministic and bit for bit the CPU's: the ids are sorted stably (CUB's
//    radix sort, positions kept in order within an id) and each distinct id's dy rows are added
//    onto its table row in position order, the CPU's sequence of fp32 additions. No atomics, so
//    data-parallel replicas and recompute see identical gradients run after run. Scratch: three
//    int32 arrays of ids.numel() and the sort's temporary storage.
// Gradient convention: dtable is ACCUMULATED (+=). Asynchronous: queued on
// CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_EMBEDDING_H_
#define XLMR_KERNELS_CUDA_EMBEDDING_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] table [V, H] f32; ids [...] i32, each in [0, V); both CUDA.
// Returns out [..., H] of out_dtype (f32|f16|bf16), a new kActivations tensor: out[i, :] =
// table[ids[i], :], each value rounded once.
Tensor EmbeddingForward(const Tensor& table, const Tensor& ids, DType out_dtype);

// [in] dy [..., H] f32|f16|bf16 (ids' shape plus H); ids as in the forward; padding_idx < 0: none.
// [in,out] dtable [V, H] f32 CUDA: dtable[ids[i], :] += dy[i, :] for every i with
// ids[i] != padding_idx.
void EmbeddingBackward(const Tensor& dy, const Tensor& ids, int64_t padding_idx, Tensor* dtable);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_EMBEDDING_H_
