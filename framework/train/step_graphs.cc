#include "framework/train/step_graphs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/check.h"
#include "framework/tensor/storage.h"

namespace xlmr::train {
namespace {

void AppendTensorForm(const char* name, const Tensor& tensor, std::string* key) {
  if (!tensor.defined()) return;
  absl::StrAppend(key, " ", name, ":", DTypeName(tensor.dtype()), ShapeString(tensor.shape()));
}

// A device buffer shaped as `host`, or undefined when `host` is.
Tensor BufferLike(const Tensor& host, Device device) {
  return host.defined() ? Tensor::Empty(host.shape(), host.dtype(), device, MemoryCategory::kActivations) : Tensor();
}

// Copies the host tensor into its buffer: queued in stream order, no wait.
void CopyInto(const Tensor& host, Tensor& buffer) {
  if (!host.defined()) return;
  CopyBytes(buffer.raw_data(), buffer.device(), host.raw_data(), host.device(), host.bytes());
}

}  // namespace

std::string StepLayoutKey(const std::vector<data::Batch>& micro_batches) {
  std::string key;
  for (const data::Batch& batch : micro_batches) {
    if (!batch.labels.defined() || batch.labels.numel() == 0 || batch.examples() == 0) return "";
    absl::StrAppend(&key, "|");
    AppendTensorForm("ids", batch.input_ids, &key);
    AppendTensorForm("mask", batch.attention_mask, &key);
    AppendTensorForm("types", batch.token_type_ids, &key);
    AppendTensorForm("labels", batch.labels, &key);
    if (batch.packed()) {
      const int32_t* bounds = batch.cu_seqlens.data<int32_t>();
      absl::StrAppend(&key, " cu_seqlens:", absl::StrJoin(bounds, bounds + batch.cu_seqlens.numel(), ","),
                      " max:", batch.max_seqlen);
    }
  }
  return key;
}

StepGraphs::StepGraphs(Device device, size_t max_layouts) : device_(device), max_layouts_(max_layouts) {
  XLMR_CHECK(ops::StepCaptureAvailable(device)) << "StepGraphs on " << DeviceName(device);
  XLMR_CHECK(max_layouts >= 1) << "StepGraphs: max_layouts " << max_layouts;
}

StepGraphs::Layout& StepGraphs::LayoutFor(const std::string& key, const std::vector<data::Batch>& micro_batches) {
  auto found = layouts_.find(key);
  if (found != layouts_.end()) return found->second;
  if (layouts_.size() >= max_layouts_) {
    auto oldest = layouts_.begin();
    for (auto it = layouts_.begin(); it != layouts_.end(); ++it) {
      if (it->second.last_used < oldest->second.last_used) oldest = it;
    }
    layouts_.erase(oldest);  // its graphs wait for the stream before they go
  }
  Layout& layout = layouts_[key];
  for (const data::Batch& batch : micro_batches) {
    MicroBatchOnDevice buffers;
    buffers.inputs.input_ids = BufferLike(batch.input_ids, device_);
    buffers.inputs.attention_mask = BufferLike(batch.attention_mask, device_);
    buffers.inputs.token_type_ids = BufferLike(batch.token_type_ids, device_);
    buffers.inputs.cu_seqlens = batch.cu_seqlens;  // host, and part of the key: a constant of the layout
    buffers.inputs.max_seqlen = batch.max_seqlen;
    buffers.labels = BufferLike(batch.labels, device_);
    layout.buffers.push_back(std::move(buffers));
  }
  return layout;
}

void StepGraphs::Run(const std::string& key, const std::vector<data::Batch>& micro_batches, const QueueFn& queue) {
  XLMR_CHECK(!key.empty()) << "StepGraphs::Run: a step that cannot be captured";
  Layout& layout = LayoutFor(key, micro_batches);
  layout.last_used = ++uses_;
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    const data::Batch& batch = micro_batches[m];
    MicroBatchOnDevice& buffers = layout.buffers[m];
    CopyInto(batch.input_ids, buffers.inputs.input_ids);
    CopyInto(batch.attention_mask, buffers.inputs.attention_mask);
    CopyInto(batch.token_type_ids, buffers.inputs.token_type_ids);
    CopyInto(batch.labels, buffers.labels);
  }
  if (!layout.warmed) {
    queue(layout.buffers);
    layout.warmed = true;
    ++direct_steps_;
    return;
  }
  if (layout.graph == nullptr) {
    Capture(layout, queue);
    ++captures_;
  } else {
    MemoryStatsFor(device_).Replay(layout.memory);
    ++replays_;
  }
  layout.graph->Launch();
}

void StepGraphs::Capture(Layout& layout, const QueueFn& queue) {
  MemoryStats& stats = MemoryStatsFor(device_);
  const MemoryStats::Excursion earlier = stats.PeaksAboveCurrent();
  stats.ResetPeaks();
  ops::BeginStepCapture(device_);
  queue(layout.buffers);
  layout.graph = ops::EndStepCapture(device_);
  layout.memory = stats.PeaksAboveCurrent();
  stats.Replay(earlier);
}

}  // namespace xlmr::train
