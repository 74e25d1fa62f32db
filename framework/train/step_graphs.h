// Whole optimizer steps captured once and replayed with one launch (CUDA graphs; framework/ops/
// step_graph.h), so that a step costs the host one launch instead of ~900 and the device no
// gaps between them. TrainStep decides whether a step may be captured (the CUDA device,
// --cuda_graphs, one rank, no profile window, an objective whose step reads nothing but the
// model's inputs and labels); this class decides when, and keeps what a replay needs.
//
// A captured step reads every per-step value from device memory written before its launch: the
// micro-batches' inputs and labels from the buffers of their layout (below), the AdamW scalars,
// the loss terms and the dropout step from the step state's StepInputs (framework/ops/
// step_decisions.h). What it copies from the host while captured is frozen into the graph
// (kernels/cuda/step_capture.h): the layout key holds everything such a copy depends on.
//
// A layout is the micro-batches' shapes and forms (padded [B, S] or packed [T] with the
// sequence bounds cu_seqlens, which a packed step's attention, slots and positions are made of).
// Per layout: its first step runs as it would without graphs (it also allocates whatever is
// allocated lazily, so that a capture allocates only what it frees); its second is captured,
// and every later one replays. The captured work reads and writes the state's two captured
// rows (kernels::kCapturedRow), which TrainStep copies from and to the ring around each
// launch, so one graph serves every ring row. Fixed-length batches have one layout;
// dynamically padded ones one per length; packed ones of varied lengths rarely repeat, and
// never reach a capture. At most `max_layouts` layouts are kept, the least recently used
// dropped first.
//
// Results: a replay runs the captured kernels with the same arguments on the same data, so a
// step replayed gives the bits of the same step run directly (tests/gpu/step_graph_test.cc).
#ifndef XLMR_FRAMEWORK_TRAIN_STEP_GRAPHS_H_
#define XLMR_FRAMEWORK_TRAIN_STEP_GRAPHS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/data/collate.h"
#include "framework/ops/step_graph.h"
#include "framework/tensor/memory_stats.h"
#include "framework/train/model_inputs.h"

namespace xlmr::train {

// One micro-batch on the model's device: what a step's forward and loss read.
struct MicroBatchOnDevice {
  ModelInputs inputs;
  Tensor labels;
};

// The layout key of a step's micro-batches (above), or "" when the step cannot be captured:
// no micro-batch, or one without labels or examples (a rank's empty share of a partial batch).
std::string StepLayoutKey(const std::vector<data::Batch>& micro_batches);

class StepGraphs {
 public:
  explicit StepGraphs(Device device, size_t max_layouts = 8);

  // Queues a step's device work from its micro-batches on the device.
  using QueueFn = std::function<void(const std::vector<MicroBatchOnDevice>& micro_batches)>;

  // Runs a step's work for `micro_batches`, whose StepLayoutKey is `key` (non-empty): copies
  // them into their layout's buffers (no wait), then queues `queue` directly, or captures it, or
  // replays it (above).
  void Run(const std::string& key, const std::vector<data::Batch>& micro_batches, const QueueFn& queue);

  // Counts since construction, for tests and the run's log.
  int64_t direct_steps() const { return direct_steps_; }
  int64_t captures() const { return captures_; }
  int64_t replays() const { return replays_; }

 private:
  struct Layout {
    std::vector<MicroBatchOnDevice> buffers;
    bool warmed = false;  // its first step ran directly
    std::unique_ptr<ops::StepGraph> graph;
    MemoryStats::Excursion memory;  // what the captured step allocated at its highest
    int64_t last_used = 0;
  };
  Layout& LayoutFor(const std::string& key, const std::vector<data::Batch>& micro_batches);
  // Captures `queue` into `layout`'s graph, keeping the memory statistics the direct step would
  // have left.
  void Capture(Layout& layout, const QueueFn& queue);

  Device device_;
  size_t max_layouts_;
  std::map<std::string, Layout> layouts_;
  int64_t uses_ = 0;
  int64_t direct_steps_ = 0;
  int64_t captures_ = 0;
  int64_t replays_ = 0;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_STEP_GRAPHS_H_
