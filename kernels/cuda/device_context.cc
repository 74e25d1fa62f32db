#include "kernels/cuda/device_context.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/core/device.h"
#include "framework/tensor/memory_stats.h"
#include "framework/tensor/tensor.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cupti_tracer.h"

namespace xlmr::kernels::cuda {
namespace {

// The process's context; set once by Init and never freed (see Init's contract).
CudaContext* current_context = nullptr;

absl::Status CheckOrdinal(int device) {
  const GpuInventory gpus = QueryGpus();
  if (gpus.count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot use GPU ", device, ": ", gpus.reason));
  }
  if (device < 0 || device >= gpus.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPU ordinal ", device, " is out of range: this process sees ", gpus.count,
                     " GPU(s) (check CUDA_VISIBLE_DEVICES and the number of ranks per node)"));
  }
  return absl::OkStatus();
}

// A blocking stream (not cudaStreamNonBlocking): the legacy default stream, which synchronous
// cudaMemcpy uses, then waits for it, so host copies need no explicit synchronisation.
cudaStream_t CreateBlockingStream() {
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamDefault));
  return stream;
}

// Makes the device's default memory pool (what cudaMallocAsync draws from) keep the memory
// that tensors free instead of handing it back to the driver at every synchronisation (the
// default release threshold is 0): a training step frees and remakes the same activations every
// micro-step, so the pool settles at the step's peak and allocation becomes a host-side lookup.
absl::Status KeepFreedMemoryInPool(int device) {
  int pools_supported = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, device));
  if (pools_supported == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot use GPU ", device,
        ": it does not support stream-ordered memory pools (cudaMallocAsync), which the CUDA "
        "backend allocates from; update the NVIDIA driver"));
  }
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep_everything = UINT64_MAX;
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CudaContext*> CudaContext::Init(int device) {
  if (current_context != nullptr) {
    if (current_context->device() == device) return current_context;
    return absl::FailedPreconditionError(
        absl::StrCat("cannot use GPU ", device, ": this process is already bound to GPU ",
                     current_context->device()));
  }
  if (absl::Status status = CheckOrdinal(device); !status.ok()) return status;
  if (const cudaError_t error = cudaSetDevice(device); error != cudaSuccess) {
    cudaGetLastError();
    return absl::InternalError(absl::StrCat("cudaSetDevice(", device, ") failed: ",
                                            cudaGetErrorName(error), ": ",
                                            cudaGetErrorString(error)));
  }
  if (absl::Status status = KeepFreedMemoryInPool(device); !status.ok()) return status;
  int multiprocessor_count = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessor_count, cudaDevAttrMultiProcessorCount,
                                    device));
  int shared_memory_optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&shared_memory_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                    device));
  current_context = new CudaContext(device, multiprocessor_count,
                                    static_cast<size_t>(shared_memory_optin), CreateBlockingStream());
  // Never freed, like the context that owns the stream it orders allocations on.
  RegisterAllocator(Device::kCuda, new CudaAllocator(current_context->compute_stream()));
  RegisterDeviceCopy(&CopyBytesWithCuda);
  StageHostToDeviceCopies(current_context->compute_stream());
  // Counts launches and waits from here on (metrics.jsonl) and records --profile_steps' device
  // events; without libcupti it reports why and the counts stay unknown.
  RegisterCuptiTracer();
  return current_context;
}

CudaContext& CudaContext::Current() {
  XLMR_CHECK(current_context != nullptr)
      << "CUDA used before CudaContext::Init (the device must be chosen first)";
  return *current_context;
}

CUstream_st* CudaContext::communication_stream() {
  std::call_once(communication_stream_once_, [this] {
    CUDA_CHECK(cudaSetDevice(device_));  // the calling thread may not have chosen a device yet
    communication_stream_ = CreateBlockingStream();
  });
  return communication_stream_;
}

cublasLtContext* CudaContext::cublaslt_handle() {
  std::call_once(cublaslt_once_, [this] {
    CUDA_CHECK(cudaSetDevice(device_));
    CUBLAS_CHECK(cublasLtCreate(&cublaslt_handle_));
  });
  return cublaslt_handle_;
}

void* CudaContext::cublaslt_workspace() {
  std::call_once(workspace_once_, [this] {
    CUDA_CHECK(cudaSetDevice(device_));
    cublaslt_workspace_ =
        Storage::Allocate(Device::kCuda, kCublasLtWorkspaceBytes, MemoryCategory::kWorkspace);
  });
  return cublaslt_workspace_->data();
}

void CudaContext::SynchronizeCompute() { CUDA_CHECK(cudaStreamSynchronize(compute_stream_)); }

}  // namespace xlmr::kernels::cuda
