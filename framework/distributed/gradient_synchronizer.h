// GradientSynchronizer: reduces gradient buckets across ranks, only on the last micro-step of
// an optimizer step (DDP's no_sync on the others), each bucket as soon as backward has
// finished it, overlapping the all-reduce with the backward of the blocks below.
//
// Usage per optimizer step:
//   sync.BeginStep();
//   for each micro-step m: model.Backward(d_logits, ctx, sync.HookFor(m == last));
//   sync.Finish();   // every bucket reduced (buckets no backward reported are reduced here)
//
// How the overlap happens depends on the communicator:
//   - MPI (AllReduceBlocksHost): a communication thread owned by the synchronizer runs the
//     all-reduces in bucket order while the main thread goes on with backward. The main
//     thread makes no MPI call of its own until Finish() has drained that thread, which is
//     what MPI_THREAD_SERIALIZED asks (MpiCommunicator checks it).
//   - NCCL: AllReduceSum only enqueues on the communication stream; Finish() makes the compute
//     stream wait for it.
//   - world size 1: the identity, called inline (no thread).
// Between a bucket's hand-over and Finish(), nobody may touch that bucket's gradients: the
// ParameterStore layout guarantees backward never writes a bucket it has reported.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_

#include <functional>
#include <memory>

#include "framework/distributed/communicator.h"
#include "framework/distributed/serial_worker.h"
#include "framework/tensor/parameter_store.h"

namespace xlmr::distributed {

class GradientSynchronizer {
 public:
  // Both must outlive the synchronizer. Starts the communication thread when the
  // communicator's all-reduce blocks the host and there is more than one rank.
  GradientSynchronizer(Communicator& communicator, ParameterStore& store);
  // Joins the communication thread (after the all-reduces still queued, if any).
  ~GradientSynchronizer();

  // Starts an optimizer step; the previous one must have been Finish()ed.
  void BeginStep();
  // The hook to pass to Backward: hands each bucket to the communicator when
  // `last_micro_step`, else does nothing. Buckets must be reported in order 0, 1, 2, ...
  std::function<void(int bucket)> HookFor(bool last_micro_step);
  // Issues every bucket not yet reported this step (e.g. a rank whose last micro-batch was
  // empty still joins every all-reduce, in the same order as the others), then waits until
  // all of them are complete. Afterwards the main thread may use the communicator again.
  void Finish();

  Communicator& communicator() { return communicator_; }
  // Whether all-reduces run on the synchronizer's own communication thread.
  bool has_communication_thread() const { return worker_ != nullptr; }

 private:
  // Hands bucket `bucket` (the next one in order) to the communicator.
  void Issue(int bucket);

  Communicator& communicator_;
  ParameterStore& store_;
  std::unique_ptr<SerialWorker> worker_;  // null: all-reduces are called inline
  int next_bucket_ = 0;
  bool step_open_ = false;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_
