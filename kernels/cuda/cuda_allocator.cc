#include "kernels/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include <sstream>
#include <string>

#include "framework/core/check.h"
#include "framework/tensor/memory_stats.h"
#include "kernels/cuda/cuda_check.h"

namespace xlmr::kernels::cuda {
namespace {

// What was asked for and what is left: what one needs to choose between a smaller batch,
// --gradient_checkpointing or a leak hunt.
std::string OutOfMemoryReport(size_t bytes) {
  cudaGetLastError();  // an allocation failure is not sticky; clear it before querying
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  const bool have_info = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
  int device = -1;
  cudaGetDevice(&device);
  std::ostringstream report;
  report << "out of GPU memory: cudaMalloc of " << bytes << " bytes on GPU " << device << "; ";
  if (have_info) report << free_bytes << " of " << total_bytes << " bytes free; ";
  report << "this process holds " << MemoryStatsFor(Device::kCuda).current_total()
         << " bytes in tensors";
  return report.str();
}

cudaMemcpyKind CopyKind(Device dst_device, Device src_device) {
  if (src_device == Device::kCpu) {
    return dst_device == Device::kCpu ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice;
  }
  return dst_device == Device::kCpu ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

}  // namespace

void* CudaAllocator::Allocate(size_t bytes) {
  void* pointer = nullptr;
  // cudaMalloc(0) succeeds with a null pointer; the Allocator contract promises non-null.
  const cudaError_t error = cudaMalloc(&pointer, bytes == 0 ? 1 : bytes);
  XLMR_CHECK(error != cudaErrorMemoryAllocation) << OutOfMemoryReport(bytes);
  CUDA_CHECK(error) << "(cudaMalloc of " << bytes << " bytes)";
  return pointer;
}

void CudaAllocator::Free(void* pointer) { CUDA_CHECK(cudaFree(pointer)); }

void CudaAllocator::Zero(void* pointer, size_t bytes) {
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemsetAsync(pointer, 0, bytes, zero_stream_));
  CUDA_CHECK(cudaStreamSynchronize(zero_stream_));
}

void CopyBytesWithCuda(void* dst, Device dst_device, const void* src, Device src_device,
                       size_t bytes) {
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, CopyKind(dst_device, src_device)))
      << "copying " << bytes << " bytes " << DeviceName(src_device) << " -> "
      << DeviceName(dst_device);
}

}  // namespace xlmr::kernels::cuda
