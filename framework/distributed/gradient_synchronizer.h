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
//
// ZeRO stage 1 (constructed with a ZeroPartition): each bucket is reduce-scattered instead of
// all-reduced, cut at the shard boundaries, at the same moments and in the same order, so
// after Finish() this rank holds the summed gradients of its own shard only (owned()), the
// rest of its gradient buffer being unspecified. The optimizer updates that shard, then
// AllGatherWeights() gives every rank every shard's new weights (and half working copy).
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_

#include <functional>
#include <memory>
#include <optional>

#include "framework/distributed/communicator.h"
#include "framework/distributed/serial_worker.h"
#include "framework/distributed/zero_partition.h"
#include "framework/tensor/parameter_store.h"

namespace xlmr::distributed {

class GradientSynchronizer {
 public:
  // Both must outlive the synchronizer. Starts the communication thread when the
  // communicator's all-reduce blocks the host and there is more than one rank.
  // With `partition` (its world size that of the communicator, its total the store's): ZeRO
  // stage 1, reduce-scatter; without: all-reduce (stage 0).
  GradientSynchronizer(Communicator& communicator, ParameterStore& store,
                       std::optional<ZeroPartition> partition = std::nullopt);
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

  // The range of the flat gradient buffer that holds the sum over ranks after Finish(): the
  // whole buffer, or under ZeRO stage 1 this rank's shard (the range its optimizer updates).
  FlatRange owned() const;
  bool sharded() const { return partition_.has_value(); }
  // ZeRO stage 1, after the optimizer updated this rank's shard of the masters (and half copy):
  // every rank receives every shard (all-gather). A no-op without sharding. Main thread, after
  // Finish().
  void AllGatherWeights();

  Communicator& communicator() { return communicator_; }
  // Whether all-reduces run on the synchronizer's own communication thread.
  bool has_communication_thread() const { return worker_ != nullptr; }

 private:
  // Hands bucket `bucket` (the next one in order) to the communicator.
  void Issue(int bucket);

  Communicator& communicator_;
  ParameterStore& store_;
  std::optional<ZeroPartition> partition_;
  std::unique_ptr<SerialWorker> worker_;  // null: all-reduces are called inline
  int next_bucket_ = 0;
  bool step_open_ = false;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_GRADIENT_SYNCHRONIZER_H_
