#include "framework/distributed/gradient_synchronizer.h"

#include <utility>
#include <vector>

#include "framework/core/check.h"

namespace xlmr::distributed {

GradientSynchronizer::GradientSynchronizer(Communicator& communicator, ParameterStore& store,
                                           std::optional<ZeroPartition> partition)
    : communicator_(communicator), store_(store), partition_(std::move(partition)) {
  XLMR_CHECK(!partition_ || (partition_->world_size() == communicator_.world_size() &&
                             partition_->total_elements() == store_.total_elements()))
      << "the ZeRO partition must cut the store's buffers over the communicator's ranks";
  if (communicator_.world_size() > 1 && communicator_.AllReduceBlocksHost()) {
    worker_ = std::make_unique<SerialWorker>();
  }
}

GradientSynchronizer::~GradientSynchronizer() = default;

void GradientSynchronizer::BeginStep() {
  XLMR_CHECK(!step_open_) << "BeginStep before the previous step's Finish";
  step_open_ = true;
  next_bucket_ = 0;
}

std::function<void(int)> GradientSynchronizer::HookFor(bool last_micro_step) {
  if (!last_micro_step) return [](int) {};
  return [this](int bucket) { Issue(bucket); };
}

void GradientSynchronizer::Issue(int bucket) {
  XLMR_CHECK(step_open_) << "gradient bucket reported outside BeginStep/Finish";
  // Every rank must issue the same all-reduces in the same order: buckets arrive in order.
  XLMR_CHECK_EQ(bucket, next_bucket_) << "gradient buckets must complete in order";
  const FlatRange& range = store_.buckets()[bucket];
  // The view is made here, on the calling thread; the worker only reads and writes its floats.
  Tensor view = store_.grads().View(range.offset, {range.size});
  ++next_bucket_;
  if (partition_) {
    std::vector<int64_t> counts = partition_->CountsWithin(range);
    if (worker_ == nullptr) {
      communicator_.ReduceScatterSum(view, counts);
      return;
    }
    worker_->Submit([this, view, counts]() mutable { communicator_.ReduceScatterSum(view, counts); });
    return;
  }
  if (worker_ == nullptr) {
    communicator_.AllReduceSum(view);
    return;
  }
  worker_->Submit([this, view]() mutable { communicator_.AllReduceSum(view); });
}

FlatRange GradientSynchronizer::owned() const {
  if (partition_) return partition_->shard(communicator_.rank());
  return {0, store_.total_elements()};
}

void GradientSynchronizer::AllGatherWeights() {
  XLMR_CHECK(!step_open_) << "AllGatherWeights before Finish";
  if (!partition_) return;
  const std::vector<int64_t> sizes = partition_->ShardSizes();
  communicator_.AllGather(store_.master(), sizes);
  if (store_.has_half_copy()) {
    // The half copy mirrors only the store's half window: rank r's part of it is its shard's
    // overlap with the window, and the overlaps tile the window in rank order.
    Tensor half = store_.half_copy();
    communicator_.AllGather(half, partition_->CountsWithin(store_.half_window()));
  }
}

void GradientSynchronizer::Finish() {
  XLMR_CHECK(step_open_) << "Finish without BeginStep";
  while (next_bucket_ < static_cast<int>(store_.buckets().size())) Issue(next_bucket_);
  if (worker_ != nullptr) worker_->Drain();
  communicator_.WaitForAllReduces();
  step_open_ = false;
}

}  // namespace xlmr::distributed
