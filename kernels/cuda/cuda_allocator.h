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

// cudaMalloc / cudaFree on the current device. Every call goes straight to the driver, which is
// simple and exact for memory accounting but slow if tensors are made and freed every step;
// a caching allocator can replace this class without touching its callers. Works on the
// calling thread's current device (CudaContext::Init sets it for the thread that calls it).
class CudaAllocator final : public Allocator {
 public:
  // [in] zero_stream: the stream Zero() clears memory on (the context's compute stream, so
  // zeroing is ordered after kernels already queued there). Not owned; must outlive this.
  explicit CudaAllocator(CUstream_st* zero_stream) : zero_stream_(zero_stream) {}

  // 256-byte aligned (cudaMalloc guarantees it); never null, also for 0 bytes. Out of memory
  // aborts with the request, the GPU's free/total bytes and what this process holds in tensors.
  void* Allocate(size_t bytes) override;
  // Implicitly waits for the whole device (cudaFree does): fine for long-lived buffers.
  void Free(void* pointer) override;
  // Clears `bytes` at `pointer` on `zero_stream`, then waits for it, so the zeros are visible to
  // every stream and to the host when this returns.
  void Zero(void* pointer, size_t bytes) override;

 private:
  CUstream_st* zero_stream_;
};

// A CopyBytesFn (framework/tensor/tensor.h) for any mix of kCpu and kCuda: a synchronous
// cudaMemcpy with the matching direction. It runs on the legacy default stream, which waits for
// all work queued on the context's (blocking) streams, so a copy to the host always sees the
// results of kernels launched before it. Host memory may be pageable.
void CopyBytesWithCuda(void* dst, Device dst_device, const void* src, Device src_device,
                       size_t bytes);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_CUDA_ALLOCATOR_H_
