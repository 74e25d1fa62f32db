#include "kernels/cuda/step_row_reader.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::kernels::cuda {
namespace {

constexpr size_t kRowBytes = sizeof(double) * kStepSlots;

}  // namespace

StepRowReader::StepRowReader() {
  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_), kRowBytes * kStepStateRows))
      << "(pinned memory for the step state's reads)";
  for (CUevent_st*& event : events_) CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
}

StepRowReader::~StepRowReader() {
  // Teardown after a CUDA error must not abort again: results are ignored here.
  for (CUevent_st* event : events_) cudaEventDestroy(event);
  cudaFreeHost(host_);
}

void StepRowReader::Queue(int row, const double* device_row) {
  XLMR_CHECK(row >= 0 && row < kStepStateRows) << "StepRowReader: row " << row;
  cudaStream_t stream = CudaContext::Current().compute_stream();
  CUDA_CHECK(cudaMemcpyAsync(host_ + int64_t{row} * kStepSlots, device_row, kRowBytes, cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaEventRecord(events_[row], stream));
}

bool StepRowReader::Arrived(int row) const {
  XLMR_CHECK(row >= 0 && row < kStepStateRows) << "StepRowReader: row " << row;
  const cudaError_t state = cudaEventQuery(events_[row]);
  if (state == cudaSuccess) return true;
  CUDA_CHECK(state == cudaErrorNotReady ? cudaSuccess : state) << "(reading the step state)";
  cudaGetLastError();  // "not ready" is a state, not an error: leave no trace of it for later checks
  return false;
}

void StepRowReader::Read(int row, double* values) {
  if (!Arrived(row)) CUDA_CHECK(cudaEventSynchronize(events_[row])) << "(reading the step state)";
  std::memcpy(values, host_ + int64_t{row} * kStepSlots, kRowBytes);
}

}  // namespace xlmr::kernels::cuda
