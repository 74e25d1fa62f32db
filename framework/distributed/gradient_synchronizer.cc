#include "framework/distributed/gradient_synchronizer.h"

#include "framework/core/check.h"

namespace xlmr::distributed {

void GradientSynchronizer::BeginStep() {
  reduced_.assign(store_.buckets().size(), false);
  next_bucket_ = 0;
}

std::function<void(int)> GradientSynchronizer::HookFor(bool last_micro_step) {
  if (!last_micro_step) return [](int) {};
  return [this](int bucket) { Reduce(bucket); };
}

void GradientSynchronizer::Reduce(int bucket) {
  // Every rank must issue the same all-reduces in the same order: buckets arrive in order.
  XLMR_CHECK_EQ(bucket, next_bucket_) << "gradient buckets must complete in order";
  const FlatRange& range = store_.buckets()[bucket];
  Tensor view = store_.grads().View(range.offset, {range.size});
  communicator_.AllReduceSum(view);
  reduced_[bucket] = true;
  ++next_bucket_;
}

void GradientSynchronizer::Finish() {
  while (next_bucket_ < static_cast<int>(reduced_.size())) Reduce(next_bucket_);
}

}  // namespace xlmr::distributed
