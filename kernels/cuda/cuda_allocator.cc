#include "kernels/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>

#include "framework/core/check.h"
#include "framework/tensor/memory_stats.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/pinned_staging.h"
#include "kernels/cuda/step_capture.h"

namespace xlmr::kernels::cuda {
namespace {

// See PoisonUninitializedMemory.
std::atomic<bool> poison_uninitialized{false};

// The pool cudaMallocAsync draws from on the calling thread's device.
cudaMemPool_t CurrentDevicePool() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

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
  report << "out of GPU memory: cudaMallocAsync of " << bytes << " bytes on GPU " << device << "; ";
  if (have_info) report << free_bytes << " of " << total_bytes << " bytes free; ";
  report << "this process holds " << MemoryStatsFor(Device::kCuda).current_total()
         << " bytes in tensors";
  uint64_t reserved = 0;
  if (cudaMemPoolGetAttribute(CurrentDevicePool(), cudaMemPoolAttrReservedMemCurrent, &reserved) ==
      cudaSuccess) {
    report << " and " << reserved << " bytes in its memory pool";
  }
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
  // A zero-byte request may yield null; the Allocator contract promises non-null.
  const cudaError_t error = cudaMallocAsync(&pointer, bytes == 0 ? 1 : bytes, stream_);
  XLMR_CHECK(error != cudaErrorMemoryAllocation) << OutOfMemoryReport(bytes);
  CUDA_CHECK(error) << "(cudaMallocAsync of " << bytes << " bytes)";
  return pointer;
}

void CudaAllocator::Free(void* pointer) { CUDA_CHECK(cudaFreeAsync(pointer, stream_)); }

void CudaAllocator::Zero(void* pointer, size_t bytes) {
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemsetAsync(pointer, 0, bytes, stream_));
}

void PoisonUninitializedMemory(bool on) { poison_uninitialized.store(on); }

void CudaAllocator::MarkUninitialized(void* pointer, size_t bytes) {
  if (bytes == 0 || !poison_uninitialized.load()) return;
  CUDA_CHECK(cudaMemsetAsync(pointer, 0xFF, bytes, stream_));
}

int64_t CudaAllocator::PeakReservedBytes() const {
  uint64_t high = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(CurrentDevicePool(), cudaMemPoolAttrReservedMemHigh, &high));
  // Captured steps allocate from the device's graph memory, reserved apart from the pool.
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  uint64_t graph_high = 0;
  CUDA_CHECK(cudaDeviceGetGraphMemAttribute(device, cudaGraphMemAttrReservedMemHigh, &graph_high));
  return static_cast<int64_t>(high + graph_high);
}

void CudaAllocator::ResetPeakReserved() {
  uint64_t zero = 0;  // the only value the high-water marks can be reset to
  CUDA_CHECK(cudaMemPoolSetAttribute(CurrentDevicePool(), cudaMemPoolAttrReservedMemHigh, &zero));
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceSetGraphMemAttribute(device, cudaGraphMemAttrReservedMemHigh, &zero));
}

namespace {

PinnedStaging*& Staging() {
  static PinnedStaging* staging = nullptr;  // never freed: copies may run until exit
  return staging;
}

}  // namespace

void StageHostToDeviceCopies(CUstream_st* stream) {
  if (Staging() == nullptr) Staging() = new PinnedStaging(stream);
}

void CopyBytesWithCuda(void* dst, Device dst_device, const void* src, Device src_device,
                       size_t bytes) {
  if (bytes == 0) return;
  if (CapturingStep()) {
    XLMR_CHECK(src_device == Device::kCpu && dst_device == Device::kCuda)
        << "a captured step copies " << bytes << " bytes " << DeviceName(src_device) << " -> "
        << DeviceName(dst_device) << ": only host constants may be copied inside a step capture";
    CaptureHostConstant(dst, src, bytes);
    return;
  }
  if (src_device == Device::kCpu && dst_device == Device::kCuda && Staging() != nullptr &&
      Staging()->CopyToDevice(dst, src, bytes)) {
    return;
  }
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, CopyKind(dst_device, src_device)))
      << "copying " << bytes << " bytes " << DeviceName(src_device) << " -> "
      << DeviceName(dst_device);
}

}  // namespace xlmr::kernels::cuda
