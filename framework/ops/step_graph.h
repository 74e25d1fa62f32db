// A training step's queued device work captured once and replayed with one launch (on CUDA, a
// CUDA graph: kernels/cuda/step_capture.h states what a capture may and may not contain). The
// caller (framework/train/step_graphs.h) decides what to capture and when to replay; this is
// the backend-neutral face of the capture, so that framework/train stays free of CUDA.
#ifndef XLMR_FRAMEWORK_OPS_STEP_GRAPH_H_
#define XLMR_FRAMEWORK_OPS_STEP_GRAPH_H_

#include <cstdint>
#include <memory>

#include "framework/core/device.h"

namespace xlmr::kernels::cuda {
class CapturedStep;
}  // namespace xlmr::kernels::cuda

namespace xlmr::ops {

class StepGraph {
 public:
  explicit StepGraph(std::unique_ptr<kernels::cuda::CapturedStep> captured);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // Queues the captured work again, reading the device memory it read when captured.
  void Launch();
  // Operations one launch replaces (the graph's nodes).
  int64_t nodes() const;

 private:
  std::unique_ptr<kernels::cuda::CapturedStep> captured_;
};

// True where steps can be captured: a CUDA build, `device` kCuda.
bool StepCaptureAvailable(Device device);
// Between these two, the ops called are recorded on `device` (StepCaptureAvailable), not run;
// EndStepCapture returns them as one graph. Aborts, naming the reason, when they cannot be.
void BeginStepCapture(Device device);
std::unique_ptr<StepGraph> EndStepCapture(Device device);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_STEP_GRAPH_H_
