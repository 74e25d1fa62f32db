#include "kernels/cuda/pinned_staging.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "kernels/cuda/cuda_check.h"

namespace xlmr::kernels::cuda {

void PinnedStaging::WaitUntilFree(const Slot& slot) {
  if (slot.event == nullptr) return;
  // Query first: a finished copy (the usual case) costs no blocking call at all.
  const cudaError_t state = cudaEventQuery(slot.event);
  if (state == cudaSuccess) return;
  CUDA_CHECK(state == cudaErrorNotReady ? cudaSuccess : state) << "(a staged copy's event)";
  cudaGetLastError();  // "not ready" is a state, not an error: leave no trace of it for later checks
  CUDA_CHECK(cudaEventSynchronize(slot.event));
}

bool PinnedStaging::CopyToDevice(void* dst, const void* src, size_t bytes) {
  if (bytes > kSlotBytes) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[next_];
  next_ = (next_ + 1) % kSlots;
  if (slot.host == nullptr) {
    CUDA_CHECK(cudaMallocHost(&slot.host, kSlotBytes)) << "(pinned staging for host-to-device copies)";
    CUDA_CHECK(cudaEventCreateWithFlags(&slot.event, cudaEventDisableTiming));
  } else {
    WaitUntilFree(slot);
  }
  std::memcpy(slot.host, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, slot.host, bytes, cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaEventRecord(slot.event, stream_));
  return true;
}

}  // namespace xlmr::kernels::cuda
