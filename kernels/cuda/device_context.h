// The GPU this process drives and the per-device resources every CUDA kernel needs: streams,
// the cuBLASLt handle and its workspace. One per process (with MPI, one rank per GPU), held
// explicitly here rather than in globals scattered over the kernels.
//
//   XLMR_ASSIGN_OR_RETURN(CudaContext* context, CudaContext::Init(local_rank));
//   Tensor x = Tensor::Zeros({n}, DType::kF16, Device::kCuda);   // now allowed
//   MyKernel<<<blocks, threads, 0, context->compute_stream()>>>(...);
//
// Plain C++ header: the CUDA handle types are forward-declared, so code above the kernels
// (framework/, models/, recipes/) can hold a context without the CUDA toolkit's headers.
#ifndef XLMR_KERNELS_CUDA_DEVICE_CONTEXT_H_
#define XLMR_KERNELS_CUDA_DEVICE_CONTEXT_H_

#include <cstddef>
#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "framework/tensor/storage.h"

// What the CUDA handle typedefs point to: cudaStream_t is CUstream_st*, cublasLtHandle_t is
// cublasLtContext*. Code that includes the CUDA headers can pass these pointers on directly.
struct CUstream_st;
struct cublasLtContext;

namespace xlmr::kernels::cuda {

class CudaContext {
 public:
  // Scratch memory handed to every cuBLASLt matmul: the size NVIDIA recommends for Hopper
  // (a smaller workspace rules some of the faster algorithms out).
  static constexpr size_t kCublasLtWorkspaceBytes = size_t{32} << 20;

  // Binds the process to GPU `device` (an ordinal among the visible GPUs), creates the compute
  // stream, and registers the CUDA allocator and host<->device copy with framework/tensor, so
  // that Tensor::Zeros(..., Device::kCuda) and Tensor::ToDevice work from then on, and the CUPTI
  // tracer (cupti_tracer.h) as Device::kCuda's profile::DeviceTracer.
  // Call once, from the main thread, before any CUDA tensor exists; calling it again with the
  // same ordinal returns the same context. The context lives until the process exits (never
  // destroyed, so no CUDA call runs during static destruction).
  // Errors: FailedPrecondition when no GPU is visible (the message says why, e.g. no driver),
  // the process is already bound to another GPU, or the GPU lacks stream-ordered memory pools; InvalidArgument when `device` is out of range;
  // Internal when the driver refuses the device (e.g. exclusive mode, already in use).
  static absl::StatusOr<CudaContext*> Init(int device);

  // The context made by Init. Aborts if Init has not succeeded: a programming error, since no
  // CUDA tensor can exist before it.
  static CudaContext& Current();

  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  // Streaming multiprocessors on the device; kernels size their grids from it.
  int multiprocessor_count() const { return multiprocessor_count_; }
  // The most shared memory one block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin):
  // which fused attention kernels the device can run (fused_attention_shared_memory.h).
  size_t shared_memory_per_block_optin() const { return shared_memory_per_block_optin_; }

  // The stream all kernels and cuBLASLt calls run on. It is a blocking stream, so synchronous
  // host copies (CopyBytes, which use the legacy default stream) wait for it: reading a result
  // on the host needs no explicit synchronisation.
  CUstream_st* compute_stream() const { return compute_stream_; }

  // A second blocking stream for gradient all-reduce, so communication overlaps the backward
  // pass. The two streams are not ordered with each other: the caller orders them with events.
  // Created on first use.
  CUstream_st* communication_stream();

  // The cuBLASLt handle, bound to compute_stream() by the matmul calls that use it. Created on
  // first use.
  cublasLtContext* cublaslt_handle();

  // kCublasLtWorkspaceBytes of device memory (counted as MemoryCategory::kWorkspace), owned by
  // the context. Allocated on first use; only ever used on compute_stream().
  void* cublaslt_workspace();

  // Blocks the host until everything queued on compute_stream() has finished.
  void SynchronizeCompute();

 private:
  CudaContext(int device, int multiprocessor_count, size_t shared_memory_per_block_optin,
              CUstream_st* compute_stream)
      : device_(device),
        multiprocessor_count_(multiprocessor_count),
        shared_memory_per_block_optin_(shared_memory_per_block_optin),
        compute_stream_(compute_stream) {}

  const int device_;
  const int multiprocessor_count_;
  const size_t shared_memory_per_block_optin_;
  CUstream_st* const compute_stream_;

  // Lazily created resources; the once_flags make first use safe from any host thread.
  std::once_flag communication_stream_once_;
  CUstream_st* communication_stream_ = nullptr;
  std::once_flag cublaslt_once_;
  cublasLtContext* cublaslt_handle_ = nullptr;
  std::once_flag workspace_once_;
  std::shared_ptr<Storage> cublaslt_workspace_;
};

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_DEVICE_CONTEXT_H_
