// Communicator: the collective operations data-parallel training needs, over the ranks of one
// launch. Implementations: LocalCommunicator (world size 1, the identity, no MPI calls at
// all), MpiCommunicator (host buffers through OpenMPI) and NcclCommunicator (gradient buckets
// in GPU memory through NCCL; its host-side collectives go through MPI or the identity).
//
// Every rank must call the same collectives in the same order (as with MPI itself). The factory
// that picks one for a process is CreateCommunicator (create_communicator.h); this header is
// the interface alone, so that the implementations include it and the factory includes them.
//
// Threads: AllReduceSum and ReduceScatterSum may be called from one communication thread while
// the main thread makes no other call on the communicator (GradientSynchronizer does exactly
// that); every other call comes from the main thread.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_COMMUNICATOR_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_COMMUNICATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/tensor/tensor.h"

namespace xlmr::distributed {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In place: every element becomes the sum over ranks. `data` is a contiguous f32 tensor
  // (a gradient bucket). Counted in allreduce_calls(). A sum, not a mean: the trainer
  // normalises each rank's loss by the global batch's example count, so the sum is exactly
  // the gradient of the mean loss even when ranks hold different numbers of examples.
  virtual void AllReduceSum(Tensor& data) = 0;
  // ZeRO stage 1's gradient reduction, in place: `data` (a contiguous f32 gradient bucket) is
  // cut into world_size() consecutive parts, part r holding counts[r] elements (sum: numel;
  // zeros allowed); afterwards this rank's part, at the same place in `data`, holds the sum
  // over ranks of that part, and the rest of `data` is unspecified. Counted in
  // allreduce_calls() (a gradient bucket's reduction either way). Blocks the host, or orders
  // on the device, exactly as AllReduceSum does (AllReduceBlocksHost, WaitForAllReduces).
  virtual void ReduceScatterSum(Tensor& data, const std::vector<int64_t>& counts) = 0;
  // In place: `data` (contiguous, any dtype; the weights after a sharded optimizer step) is cut
  // into parts as for ReduceScatterSum; afterwards every rank holds every rank's part r, from
  // rank r. Complete on return for host buffers; on a device, later work on the compute stream
  // is ordered after it.
  virtual void AllGather(Tensor& data, const std::vector<int64_t>& counts) = 0;
  // Host memory: rank `root` receives every rank's `local` (counts[r] floats from rank r,
  // counts[rank()] == local's count) concatenated in rank order into `all_on_root` (the sum of
  // counts; ignored on other ranks). For checkpoints of sharded optimizer state, not a hot path.
  virtual void GatherToRoot(const float* local, float* all_on_root, const std::vector<int64_t>& counts,
                            int root) = 0;
  // True when AllReduceSum returns only once the sum is complete, so overlapping it with
  // backward takes a host thread (MPI). False when it costs nothing (the identity) or only
  // enqueues work on a device stream (NCCL).
  virtual bool AllReduceBlocksHost() const = 0;
  // Orders the computation that follows after every AllReduceSum issued so far: a no-op for
  // blocking implementations; for NCCL, the compute stream waits for the communication stream.
  virtual void WaitForAllReduces() {}
  // Logical AND over ranks (e.g. "all gradients finite").
  virtual bool AllTrue(bool value) = 0;
  // Sum over ranks of a few doubles (metrics: losses, token counts), in place.
  virtual void AllReduceSumDoubles(double* values, size_t count) = 0;
  // In place, on the tensor's device: elements [first, first + count) of `data`, an I64 tensor
  // whose bytes are doubles (framework/ops/step_decisions.h's step state), become their sums
  // over ranks. Host memory (this default): through AllReduceSumDoubles, complete on return.
  // GPU memory (NcclCommunicator): enqueued, ordered after the compute stream's work so far
  // and before its later work, with no host wait: a step's finite flag and sharded sum of
  // squares are agreed where they were computed.
  virtual void AllReduceSumStateDoubles(Tensor& data, int64_t first, int64_t count);
  // Every rank's `local` values concatenated in rank order (sizes may differ per rank).
  virtual std::vector<double> AllGatherDoubles(const std::vector<double>& local) = 0;
  // Copies `bytes` bytes of rank `root`'s buffer into everyone's.
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;
  virtual void Barrier() = 0;
  // Stops every rank of the job (used when one rank hits an error, so the others do not hang).
  [[noreturn]] virtual void Abort(int exit_code) = 0;

  // Number of gradient bucket reductions (AllReduceSum, or ReduceScatterSum under ZeRO stage 1)
  // this rank has issued.
  int64_t allreduce_calls() const { return allreduce_calls_; }
  // A replayed step (a CUDA graph: framework/train/step_graphs.h) issues the `calls` reductions
  // its capture issued, on the device, without calling the methods that count them.
  void CountReplayedCalls(int64_t calls) { allreduce_calls_ += calls; }

 protected:
  int64_t allreduce_calls_ = 0;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_COMMUNICATOR_H_
