// Collectives over OpenMPI on host memory (the CPU backend's data-parallel transport, and the
// channel that carries the NCCL unique id). MPI_Init happens in Create(), only when the
// process was started by mpirun; MPI_Finalize in the destructor.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_MPI_COMMUNICATOR_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_MPI_COMMUNICATOR_H_

#include <memory>

#include "absl/status/statusor.h"
#include "framework/distributed/communicator.h"

namespace xlmr::distributed {

class MpiCommunicator final : public Communicator {
 public:
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> Create();
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  void AllReduceSum(Tensor& data) override;
  bool AllTrue(bool value) override;
  void AllReduceSumDoubles(double* values, size_t count) override;
  std::vector<double> AllGatherDoubles(const std::vector<double>& local) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void Barrier() override;
  [[noreturn]] void Abort(int exit_code) override;

 private:
  MpiCommunicator(int rank, int world_size) : rank_(rank), world_size_(world_size) {}
  int rank_;
  int world_size_;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_MPI_COMMUNICATOR_H_
