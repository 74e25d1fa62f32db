// GPU memory for framework/tensor: the Allocator behind Device::kCuda and the host<->device
// byte copy behind CopyBytes. CudaContext::Init registers both; nothing else should need to name
// them. Plain C++ header (no CUDA headers), like everything above kernels/cuda.
#ifndef XLMR_KERNELS_CUDA_CUDA_ALLOCATOR_H_
#define XLMR_KERNELS_CUDA_CUDA_ALLOCATOR_H_

#include <cstddef>

#include "framework/core/device.h"
#include "framework/tensor/storage.h"

struct CUstream_st;  // what cudaStream_t points to

namespace xlmr::kernels::cuda {

// Stream-ordered GPU memory from the CUDA runtime's own caching allocator (cudaMallocAsync /
// cudaFreeAsync on the device's default memory pool, which CudaContext::Init sets to keep freed
// memory instead of returning it to the driver). Training makes and frees activations every
// micro-step; plain cudaMalloc/cudaFree would synchronise the whole device on each free and
// serialise the host with the GPU, while the pool hands freed blocks back in stream order at
// the cost of a host-side lookup.
//
// Stream contract: every allocation, free and zero-fill is ordered on `stream` (the context's
// compute stream). Memory is usable by work queued on that stream after Allocate returns, and
// by any other stream once ordered after it (an event; the NCCL communicator does this). A
// tensor used on another stream must have that use ordered back onto `stream` before it is
// freed: the gradient buffers that the communication stream reads live for the whole run.
// Works on the calling thread's current device (CudaContext::Init sets it for its thread).
class CudaAllocator final : public Allocator {
 public:
  // [in] stream: the stream every allocation is ordered on. Not owned; must outlive this.
  explicit CudaAllocator(CUstream_st* stream) : stream_(stream) {}

  // 256-byte aligned (the pool's granularity); never null, also for 0 bytes. Out of memory
  // aborts with the request, the GPU's free/total bytes and what this process holds in tensors.
  void* Allocate(size_t bytes) override;
  // Returns the block to the pool once `stream` reaches this point; no synchronisation.
  void Free(void* pointer) override;
  // Clears `bytes` at `pointer` on `stream` (asynchronous, like every kernel: later work on
  // `stream`, host copies through CopyBytesWithCuda and streams ordered after it see zeros).
  void Zero(void* pointer, size_t bytes) override;
  // With poisoning on (PoisonUninitializedMemory), fills the bytes with 0xFF on `stream`.
  void MarkUninitialized(void* pointer, size_t bytes) override;
  // The default memory pool's high-water mark (cudaMemPoolAttrReservedMemHigh) plus the graph
  // memory's (captured steps: cudaGraphMemAttrReservedMemHigh).
  int64_t PeakReservedBytes() const override;
  void ResetPeakReserved() override;

 private:
  CUstream_st* stream_;
};

// For tests: while on, memory handed out uninitialised (Tensor::Empty) is filled with 0xFF bytes,
// which read as NaN in f32 and f16 and as -1 in i32, so an output element a kernel forgets to
// write shows up against the CPU backend instead of silently holding the pool's old (often
// zero) contents. Off by default: production pays nothing for it. Process-wide.
void PoisonUninitializedMemory(bool on);

// A CopyBytesFn (framework/tensor/tensor.h) for any mix of kCpu and kCuda. Host to device,
// once StageHostToDeviceCopies has been called and up to PinnedStaging::kSlotBytes: queued on
// that stream through pinned staging, without waiting for the GPU (pinned_staging.h); the
// host's buffer may be reused at once, and work queued on that stream afterwards sees the bytes.
// Otherwise a synchronous cudaMemcpy with the matching direction on the legacy default stream,
// which waits for all work queued on the context's (blocking) streams, so a copy to the host
// always sees the results of kernels launched before it. Host memory may be pageable.
void CopyBytesWithCuda(void* dst, Device dst_device, const void* src, Device src_device,
                       size_t bytes);

// Makes CopyBytesWithCuda stage host-to-device copies onto `stream` (the compute stream, whose
// kernels read the inputs). Call once, at CudaContext::Init.
void StageHostToDeviceCopies(CUstream_st* stream);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_CUDA_ALLOCATOR_H_
