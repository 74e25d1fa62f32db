#include "kernels/cuda/step_capture.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"

namespace xlmr::kernels::cuda {
namespace {

// The open capture: its stream and the pinned constants its copies read so far.
struct OpenCapture {
  CUstream_st* stream = nullptr;
  std::vector<void*> constants;
};

OpenCapture& Open() {
  static OpenCapture open;
  return open;
}

std::atomic<bool> capturing{false};

}  // namespace

CapturedStep::~CapturedStep() {
  // Teardown after a CUDA error must not abort again: results are ignored here. The graph may
  // still be running: its constants are freed only once the stream has finished it.
  cudaStreamSynchronize(stream_);
  cudaGraphExecDestroy(exec_);
  cudaGraphDestroy(graph_);
  for (void* constant : constants_) cudaFreeHost(constant);
}

void CapturedStep::Launch() { CUDA_CHECK(cudaGraphLaunch(exec_, stream_)) << "(replaying a captured step)"; }

void BeginStepCapture(CUstream_st* stream) {
  XLMR_CHECK(!capturing.load()) << "a step capture is already open";
  Open() = OpenCapture{stream, {}};
  // Relaxed: CaptureHostConstant allocates pinned memory while the capture is open.
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed)) << "(capturing a step)";
  capturing.store(true);
}

bool CapturingStep() { return capturing.load(); }

void CaptureHostConstant(void* dst, const void* src, size_t bytes) {
  XLMR_CHECK(capturing.load()) << "CaptureHostConstant outside a step capture";
  void* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, bytes)) << "(" << bytes << " bytes of a captured step's constants)";
  Open().constants.push_back(pinned);
  std::memcpy(pinned, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, pinned, bytes, cudaMemcpyHostToDevice, Open().stream))
      << "(a captured step's constant of " << bytes << " bytes)";
}

std::unique_ptr<CapturedStep> EndStepCapture() {
  XLMR_CHECK(capturing.load()) << "EndStepCapture without BeginStepCapture";
  capturing.store(false);
  OpenCapture open = std::move(Open());
  Open() = OpenCapture{};
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(open.stream, &graph))
      << "(the step's work could not be captured: it waited for the device, read device memory on the host, "
         "or used another stream without joining it back)";
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  cudaGraphExec_t exec = nullptr;
  // No automatic frees: a step that leaves memory allocated fails here instead of freeing what
  // a tensor still points to at the next launch.
  CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0))
      << "(instantiating a captured step of " << nodes << " nodes: did it free everything it allocated?)";
  CUDA_CHECK(cudaGraphUpload(exec, open.stream));
  // The graph's allocations come from the device's graph memory; what the pool still holds
  // from the layout's direct step goes back to the device rather than being kept twice.
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  return std::unique_ptr<CapturedStep>(new CapturedStep(open.stream, graph, exec, std::move(open.constants), nodes));
}

}  // namespace xlmr::kernels::cuda
