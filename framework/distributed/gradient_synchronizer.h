// GradientSynchronizer: reduces gradient buckets across ranks, only on the last micro-step of
// an optimizer step (DDP's no_sync on the others), each bucket as soon as backward has
// finished it.
//
// Usage per optimizer step:
//   sync.BeginStep();
//   for each micro-step m: model.Backward(d_logits, ctx, sync.HookFor(m == last));
//   sync.Finish();   // every bucket reduced (buckets no backward reported are reduced here)
//
// On the CPU backend the MPI all-reduce of a bucket runs when the bucket is reported, i.e.
// between the backward of two blocks. (On the GPU backend it is issued on a communication
// stream so that it overlaps the backward of the blocks below.)
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_

#include <functional>
#include <vector>

#include "framework/distributed/communicator.h"
#include "framework/tensor/parameter_store.h"

namespace xlmr::distributed {

class GradientSynchronizer {
 public:
  GradientSynchronizer(Communicator& communicator, ParameterStore& store)
      : communicator_(communicator), store_(store) {}

  void BeginStep();
  // The hook to pass to Backward: reduces buckets when `last_micro_step`, else does nothing.
  std::function<void(int bucket)> HookFor(bool last_micro_step);
  // Reduces every bucket not yet reduced this step (e.g. a rank whose last micro-batch was
  // empty still joins every all-reduce, in the same order as the others).
  void Finish();

  Communicator& communicator() { return communicator_; }

 private:
  void Reduce(int bucket);
  Communicator& communicator_;
  ParameterStore& store_;
  std::vector<bool> reduced_;
  int next_bucket_ = 0;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_
