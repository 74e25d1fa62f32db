// The host's late reads of the step-state ring (framework/ops/step_decisions.h) on CUDA: at the
// end of a step, a row is copied by cudaMemcpyAsync on the compute stream into pinned host
// memory and an event is recorded behind it. The host later asks whether it has arrived
// (cudaEventQuery: never a wait) and reads it, waiting only when it asks for a row the GPU has
// not finished yet. This is how a training step's outcome (loss, skip, norm, scale) reaches the
// host without a blocking call inside the step (issue 38, item 2).
#ifndef XLMR_KERNELS_CUDA_STEP_ROW_READER_H_
#define XLMR_KERNELS_CUDA_STEP_ROW_READER_H_

#include <array>

#include "kernels/common/step_state.h"

struct CUevent_st;

namespace xlmr::kernels::cuda {

class StepRowReader {
 public:
  StepRowReader();  // pinned memory for every row, one event per row (the current device)
  ~StepRowReader();
  StepRowReader(const StepRowReader&) = delete;
  StepRowReader& operator=(const StepRowReader&) = delete;

  // Queues the copy of `device_row` (kStepSlots doubles of device memory) as row `row`'s
  // reading, behind everything queued on the compute stream so far. A row must be read (Read)
  // before it is queued again.
  void Queue(int row, const double* device_row);
  // Whether row `row`'s queued copy has landed (no wait).
  bool Arrived(int row) const;
  // Row `row`'s queued copy into `values` (kStepSlots doubles), waiting for it if needed.
  void Read(int row, double* values);

 private:
  double* host_ = nullptr;  // kStepStateRows x kStepSlots pinned doubles
  std::array<CUevent_st*, kStepStateRows> events_{};
};

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_STEP_ROW_READER_H_
