#include "framework/distributed/gradient_synchronizer.h"

#include "framework/core/check.h"

namespace xlmr::distributed {

GradientSynchronizer::GradientSynchronizer(Communicator& communicator, ParameterStore& store)
    : communicator_(communicator), store_(store) {
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
  if (worker_ == nullptr) {
    communicator_.AllReduceSum(view);
    return;
  }
  worker_->Submit([this, view]() mutable { communicator_.AllReduceSum(view); });
}

void GradientSynchronizer::Finish() {
  XLMR_CHECK(step_open_) << "Finish without BeginStep";
  while (next_bucket_ < static_cast<int>(store_.buckets().size())) Issue(next_bucket_);
  if (worker_ != nullptr) worker_->Drain();
  communicator_.WaitForAllReduces();
  step_open_ = false;
}

}  // namespace xlmr::distributed
