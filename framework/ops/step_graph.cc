#include "framework/ops/step_graph.h"

#include <utility>

#include "framework/core/check.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/step_capture.h"
#else
// A build without CUDA never captures; completing the type lets StepGraph's unique_ptr be
// destroyed (--config=cpu).
namespace xlmr::kernels::cuda {
class CapturedStep {};
}  // namespace xlmr::kernels::cuda
#endif

namespace xlmr::ops {

#ifdef XLMR_WITH_CUDA

StepGraph::StepGraph(std::unique_ptr<kernels::cuda::CapturedStep> captured) : captured_(std::move(captured)) {}
StepGraph::~StepGraph() = default;
void StepGraph::Launch() { captured_->Launch(); }
int64_t StepGraph::nodes() const { return static_cast<int64_t>(captured_->nodes()); }

bool StepCaptureAvailable(Device device) { return device == Device::kCuda; }

void BeginStepCapture(Device device) {
  XLMR_CHECK(StepCaptureAvailable(device)) << "ops::BeginStepCapture: no step capture on " << DeviceName(device);
  kernels::cuda::BeginStepCapture(kernels::cuda::CudaContext::Current().compute_stream());
}

std::unique_ptr<StepGraph> EndStepCapture(Device device) {
  XLMR_CHECK(StepCaptureAvailable(device)) << "ops::EndStepCapture: no step capture on " << DeviceName(device);
  return std::make_unique<StepGraph>(kernels::cuda::EndStepCapture());
}

#else  // a CPU-only build: nothing is ever captured

StepGraph::StepGraph(std::unique_ptr<kernels::cuda::CapturedStep>) {}
StepGraph::~StepGraph() = default;
void StepGraph::Launch() { XLMR_CHECK(false) << "ops::StepGraph: no CUDA in this build"; }
int64_t StepGraph::nodes() const { return 0; }
bool StepCaptureAvailable(Device) { return false; }
void BeginStepCapture(Device) { XLMR_CHECK(false) << "ops::BeginStepCapture: no CUDA in this build"; }
std::unique_ptr<StepGraph> EndStepCapture(Device) {
  XLMR_CHECK(false) << "ops::EndStepCapture: no CUDA in this build";
  return nullptr;
}

#endif

}  // namespace xlmr::ops
