// World size 1: collectives are the identity (the mean over one rank is the value itself).
// The all-reduce counter still counts calls, so the trainer's bookkeeping is testable alone.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_LOCAL_COMMUNICATOR_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_LOCAL_COMMUNICATOR_H_

#include "framework/distributed/communicator.h"

namespace xlmr::distributed {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void AllReduceSum(Tensor&) override { ++allreduce_calls_; }
  // One part, the whole buffer: already the sum over the one rank.
  void ReduceScatterSum(Tensor&, const std::vector<int64_t>&) override { ++allreduce_calls_; }
  void AllGather(Tensor&, const std::vector<int64_t>&) override {}
  void GatherToRoot(const float* local, float* all_on_root, const std::vector<int64_t>& counts,
                    int root) override;
  bool AllReduceBlocksHost() const override { return false; }
  bool AllTrue(bool value) override { return value; }
  void AllReduceSumDoubles(double*, size_t) override {}
  std::vector<double> AllGatherDoubles(const std::vector<double>& local) override { return local; }
  void Broadcast(void*, size_t, int) override {}
  void Barrier() override {}
  [[noreturn]] void Abort(int exit_code) override;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_LOCAL_COMMUNICATOR_H_
