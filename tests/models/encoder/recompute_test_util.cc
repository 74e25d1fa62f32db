#include "tests/models/encoder/recompute_test_util.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "framework/tensor/storage.h"
#include "gtest/gtest.h"

namespace xlmr::testing {
namespace {

// Wraps the CPU allocator and counts the bytes it hands out, whatever category the storage is
// tagged with: the witness that the MemoryStats categories are not checked against themselves.
class CountingCpuAllocator final : public Allocator {
 public:
  explicit CountingCpuAllocator(Allocator& inner) : inner_(inner) {}
  void* Allocate(size_t bytes) override {
    void* pointer = inner_.Allocate(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[pointer] = static_cast<int64_t>(bytes);
    current_ += static_cast<int64_t>(bytes);
    peak_ = std::max(peak_, current_);
    return pointer;
  }
  void Free(void* pointer) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = sizes_.find(pointer);
      if (it != sizes_.end()) {  // memory from before the wrapper was registered is not counted
        current_ -= it->second;
        sizes_.erase(it);
      }
    }
    inner_.Free(pointer);
  }
  void Zero(void* pointer, size_t bytes) override { inner_.Zero(pointer, bytes); }
  void MarkUninitialized(void* pointer, size_t bytes) override { inner_.MarkUninitialized(pointer, bytes); }

  int64_t current() {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  int64_t peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }
  void ResetPeak() {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = current_;
  }

 private:
  Allocator& inner_;
  std::mutex mutex_;
  std::unordered_map<void*, int64_t> sizes_;
  int64_t current_ = 0;
  int64_t peak_ = 0;
};

// Registered once, before the first RecomputeTrainer allocates anything.
CountingCpuAllocator& CountingAllocator() {
  static CountingCpuAllocator* counting = [] {
    auto* wrapper = new CountingCpuAllocator(AllocatorFor(Device::kCpu));
    RegisterAllocator(Device::kCpu, wrapper);
    return wrapper;
  }();
  return *counting;
}

TinyModelOptions RecomputeModel(int layers) {
  TinyModelOptions model;
  model.layers = layers;
  model.heads = 4;
  model.intermediate = 32;
  model.dropout = 0.1;
  return model;
}

TinyTrainerOptions RecomputeTraining(int layers, const RecomputeVariant& variant, uint64_t dropout_seed) {
  TinyTrainerOptions options;
  options.model = RecomputeModel(layers);
  options.model.attention = variant.attention;
  if (variant.fp16) options.autocast = DType::kF16;
  options.dropout_seed = dropout_seed;
  return options;
}

}  // namespace

models::EncoderConfig TinyRecomputeConfig(int layers) { return TinyXlmrConfig(RecomputeModel(layers)); }

std::vector<RecomputeVariant> AllRecomputeVariants() {
  std::vector<RecomputeVariant> variants;
  for (bool fp16 : {false, true}) {
    for (auto attention : {models::AttentionImplementation::kEager, models::AttentionImplementation::kFused}) {
      variants.push_back({fp16, attention});
    }
  }
  return variants;
}

std::string VariantName(const RecomputeVariant& variant) {
  return std::string(variant.fp16 ? "Fp16" : "Fp32") +
         (variant.attention == models::AttentionImplementation::kFused ? "Fused" : "Eager");
}

data::TokenizedDataset TinyRecomputeDataset(int n, int max_length, bool uniform) {
  TinyDataOptions options;
  options.max_length = max_length;
  options.uniform = uniform;
  return TinyDataset(n, options);
}

std::vector<data::Batch> StepBatches(const data::TokenizedDataset& dataset, StepShape shape, int step,
                                     bool packed) {
  std::vector<data::Batch> batches;
  for (int64_t m = 0; m < shape.accumulation; ++m) {
    std::vector<int64_t> indices;
    const int64_t first = (step * shape.accumulation + m) * shape.per_device_batch;
    for (int64_t i = 0; i < shape.per_device_batch; ++i) indices.push_back((first + i) % dataset.size());
    batches.push_back(packed ? data::CollatePacked(dataset, indices) : data::Collate(dataset, indices, /*pad_id=*/1));
  }
  return batches;
}

RecomputeTrainer::RecomputeTrainer(int layers, const RecomputeVariant& variant, uint64_t dropout_seed)
    : trainer_((CountingAllocator(), RecomputeTraining(layers, variant, dropout_seed))) {}

MeasuredStep RecomputeTrainer::Step(int step, const std::vector<data::Batch>& batches) {
  MemoryStats& stats = MemoryStatsFor(Device::kCpu);
  CountingCpuAllocator& counting = CountingAllocator();
  const int64_t held_by_others = stats.Of(MemoryCategory::kActivations).current - HostBytes(batches);
  const int64_t allocated_before = counting.current() - HostBytes(batches);
  const int64_t workspace_before = stats.Of(MemoryCategory::kWorkspace).current;
  stats.ResetPeaks();
  counting.ResetPeak();
  MeasuredStep measured;
  measured.outcome = trainer_.Step(step, batches);
  measured.peak_activation_bytes = stats.Of(MemoryCategory::kActivations).peak - held_by_others;
  measured.peak_allocated_bytes = counting.peak() - allocated_before;
  measured.peak_workspace_bytes = stats.Of(MemoryCategory::kWorkspace).peak - workspace_before;
  return measured;
}

int64_t HostBytes(const std::vector<data::Batch>& batches) {
  int64_t bytes = 0;
  for (const data::Batch& batch : batches) {
    bytes += static_cast<int64_t>(batch.input_ids.bytes() + batch.attention_mask.bytes() +
                                  batch.labels.bytes());
  }
  return bytes;
}

}  // namespace xlmr::testing
