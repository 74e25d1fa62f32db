// A training step's queued work captured into a CUDA graph on the compute stream and replayed
// with one launch (framework/ops/step_graph.h is the backend-neutral face; framework/train/
// step_graphs.h decides when). What capture records is the step's device work with every
// address and kernel argument as they were while capturing; what changes from step to step is
// read by the kernels from device memory (the step state's StepInputs, the step's input
// buffers), written before each launch.
//
// During a capture:
// - allocations (cudaMallocAsync on the compute stream) become the graph's own memory nodes:
//   the step must free everything it allocates (EndStepCapture fails otherwise);
// - a host -> device copy (CopyBytesWithCuda) copies from pinned memory that the graph keeps
//   for its lifetime: the bytes are frozen, so they must be a constant of the captured
//   step's shapes (dropout slots, absolute positions), never a batch's data;
// - a device -> host copy or any wait fails the capture, with the copy named.
// The capture mode is relaxed: the pinned copies above allocate while capturing.
#ifndef XLMR_KERNELS_CUDA_STEP_CAPTURE_H_
#define XLMR_KERNELS_CUDA_STEP_CAPTURE_H_

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

struct CUgraph_st;      // what cudaGraph_t points to
struct CUgraphExec_st;  // what cudaGraphExec_t points to
struct CUstream_st;     // what cudaStream_t points to

namespace xlmr::kernels::cuda {

class CapturedStep {
 public:
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;

  // Queues the whole step on the stream it was captured from: one launch, no host wait.
  void Launch();
  // The graph's nodes (kernels, copies, memsets, memory nodes): what one launch replaces.
  size_t nodes() const { return nodes_; }

 private:
  friend std::unique_ptr<CapturedStep> EndStepCapture();
  CapturedStep(CUstream_st* stream, CUgraph_st* graph, CUgraphExec_st* exec, std::vector<void*> constants,
               size_t nodes)
      : stream_(stream), graph_(graph), exec_(exec), constants_(std::move(constants)), nodes_(nodes) {}

  CUstream_st* stream_;
  CUgraph_st* graph_;
  CUgraphExec_st* exec_;
  std::vector<void*> constants_;  // pinned host memory the graph's copies read
  size_t nodes_;
};

// Starts capturing `stream`'s work (the compute stream; no capture may be open).
void BeginStepCapture(CUstream_st* stream);
// Ends the capture and instantiates it. Aborts with CUDA's reason when the captured work was
// not capturable (a wait, a device -> host copy, an allocation not freed).
std::unique_ptr<CapturedStep> EndStepCapture();
// True between BeginStepCapture and EndStepCapture.
bool CapturingStep();
// During a capture: queues the copy of `bytes` host bytes (a constant of the step's shapes) to
// device memory `dst`, from a pinned copy of them that the graph keeps.
void CaptureHostConstant(void* dst, const void* src, size_t bytes);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_STEP_CAPTURE_H_
