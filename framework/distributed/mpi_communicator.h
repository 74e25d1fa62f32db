// Collectives over OpenMPI on host memory (the CPU backend's data-parallel transport, and the
// channel that carries the NCCL unique id). MPI_Init_thread happens in Create(), only when the
// process was started by mpirun; MPI_Finalize in the destructor.
//
// Threads: MPI is initialised at MPI_THREAD_SERIALIZED, the level GradientSynchronizer needs
// to all-reduce gradient buckets on its communication thread while the main thread goes on
// with backward. SERIALIZED means two threads must never be inside MPI at the same time; every
// call here checks that (a fatal error naming the rule, instead of undefined behaviour inside
// MPI). Keeping the ORDER of collectives identical on every rank is the caller's job.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_MPI_COMMUNICATOR_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_MPI_COMMUNICATOR_H_

#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "framework/distributed/communicator.h"

namespace xlmr::distributed {

class MpiCommunicator final : public Communicator {
 public:
  // Errors: Unavailable when MPI_Init_thread fails (not started by mpirun, or a broken
  // install), FailedPrecondition when the MPI library cannot provide MPI_THREAD_SERIALIZED.
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> Create();
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  // [in,out] data: contiguous f32 on the CPU. Blocks until the sum is complete.
  void AllReduceSum(Tensor& data) override;
  // [in,out] data: contiguous f32 on the CPU (MPI_Reduce_scatter, in place). Blocks until done.
  void ReduceScatterSum(Tensor& data, const std::vector<int64_t>& counts) override;
  // [in,out] data: contiguous on the CPU, any dtype (MPI_Allgatherv, in place).
  void AllGather(Tensor& data, const std::vector<int64_t>& counts) override;
  void GatherToRoot(const float* local, float* all_on_root, const std::vector<int64_t>& counts,
                    int root) override;
  bool AllReduceBlocksHost() const override { return true; }
  bool AllTrue(bool value) override;
  void AllReduceSumDoubles(double* values, size_t count) override;
  std::vector<double> AllGatherDoubles(const std::vector<double>& local) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void Barrier() override;
  // MPI_Abort: stops every rank of the job. Callable from any thread at any time.
  [[noreturn]] void Abort(int exit_code) override;

 private:
  MpiCommunicator(int rank, int world_size) : rank_(rank), world_size_(world_size) {}
  // Held for the duration of each MPI call; taking it fails loudly if another thread holds it.
  std::unique_lock<std::mutex> EnterMpi();

  int rank_;
  int world_size_;
  std::mutex in_mpi_;
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_MPI_COMMUNICATOR_H_
