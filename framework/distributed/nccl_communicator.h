// NCCL collectives for gradient buckets in GPU memory (the CUDA backend's data-parallel
// transport). One rank per GPU: rank r binds to GPU `local rank` (mpirun's
// OMPI_COMM_WORLD_LOCAL_RANK, the rank's index among the ranks of its host), so
// `mpirun -np 8` on an 8-GPU host uses GPUs 0..7, and `-H a:4,b:4` uses GPUs 0..3 on each host.
//
// Set-up: rank 0 creates the NCCL unique id and broadcasts it over the host communicator
// (MPI; for one process, the identity), then every rank joins with ncclCommInitRank.
// Gradient all-reduces are enqueued on the CudaContext's communication stream after the
// compute stream's work so far (event-ordered), so they overlap the rest of backward without a
// host thread; WaitForAllReduces() orders the compute stream after them. ZeRO stage 1's
// reduce-scatters are enqueued the same way; its all-gather of the updated weights is ordered
// after the optimizer step and before the next forward pass. The host-side
// collectives (AllTrue, loss sums, gathers, barriers, Abort) go through the host communicator.
//
// Plain C++ header: the NCCL and CUDA handle types are forward-declared; <nccl.h> appears only
// in nccl_communicator.cc. Built only with the CUDA toolkit (target :nccl_communicator).
// STATUS: compiled here (no GPU on the build machine); it has not run on a GPU yet.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_NCCL_COMMUNICATOR_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_NCCL_COMMUNICATOR_H_

#include <memory>

#include "absl/status/statusor.h"
#include "framework/distributed/communicator.h"
#include "framework/distributed/launch_environment.h"

struct CUevent_st;  // what cudaEvent_t points to
struct CUstream_st;  // what cudaStream_t points to
struct ncclComm;    // what ncclComm_t points to

namespace xlmr::distributed {

class NcclCommunicator final : public Communicator {
 public:
  // Binds this process to GPU env.local_rank (CudaContext::Init), then creates the NCCL
  // communicator over `host`'s ranks (`host` carries the unique id; owned from now on).
  // Errors: FailedPrecondition/InvalidArgument from CudaContext::Init (no GPU, local rank
  // beyond the visible GPUs), Internal when NCCL initialisation fails (its message included).
  static absl::StatusOr<std::unique_ptr<NcclCommunicator>> Create(const LaunchEnvironment& env,
                                                                  std::unique_ptr<Communicator> host);
  // Waits for the communication stream, then destroys the NCCL communicator (before the host
  // communicator finalises MPI).
  ~NcclCommunicator() override;

  int rank() const override { return host_->rank(); }
  int world_size() const override { return host_->world_size(); }
  // [in,out] data: contiguous f32 on the GPU. Enqueued, not complete, on return: the sum is
  // ordered after everything already on the compute stream, and WaitForAllReduces() orders
  // later compute work after it.
  void AllReduceSum(Tensor& data) override;
  // [in,out] data: contiguous f32 on the GPU, enqueued and ordered like AllReduceSum. Equal
  // counts take ncclReduceScatter in place; unequal ones (a bucket cut unevenly by the shard
  // boundaries, the usual case: distributed/zero_partition.h) a group of ncclReduce calls, one
  // per rank whose part is not empty, each to that rank, NCCL having no variable-count
  // reduce-scatter.
  void ReduceScatterSum(Tensor& data, const std::vector<int64_t>& counts) override;
  // [in,out] data: contiguous on the GPU, f32, f16 or bf16. Ordered after the compute stream's
  // work so far (the optimizer step), and the compute stream's later work after it. Equal
  // counts take ncclAllGather in place; unequal ones a group of ncclBroadcast calls.
  void AllGather(Tensor& data, const std::vector<int64_t>& counts) override;
  void GatherToRoot(const float* local, float* all_on_root, const std::vector<int64_t>& counts,
                    int root) override {
    host_->GatherToRoot(local, all_on_root, counts, root);
  }
  bool AllReduceBlocksHost() const override { return false; }
  void WaitForAllReduces() override;

  bool AllTrue(bool value) override { return host_->AllTrue(value); }
  void AllReduceSumDoubles(double* values, size_t count) override {
    host_->AllReduceSumDoubles(values, count);
  }
  // GPU memory: one ncclAllReduce of doubles on the communication stream, event-ordered after
  // the compute stream's work so far and before its later work (no host wait). Host memory:
  // the host communicator's sum.
  void AllReduceSumStateDoubles(Tensor& data, int64_t first, int64_t count) override;
  std::vector<double> AllGatherDoubles(const std::vector<double>& local) override {
    return host_->AllGatherDoubles(local);
  }
  void Broadcast(void* data, size_t bytes, int root) override { host_->Broadcast(data, bytes, root); }
  void Barrier() override { host_->Barrier(); }
  [[noreturn]] void Abort(int exit_code) override;

 private:
  NcclCommunicator(std::unique_ptr<Communicator> host, ncclComm* comm, CUstream_st* compute_stream,
                   CUstream_st* communication_stream);

  std::unique_ptr<Communicator> host_;  // declared first: destroyed last (MPI_Finalize)
  ncclComm* comm_;
  CUstream_st* compute_stream_;
  CUstream_st* communication_stream_;
  CUevent_st* grads_ready_;  // recorded on the compute stream before each all-reduce
  CUevent_st* reduced_;      // recorded on the communication stream by WaitForAllReduces

  // Makes the communication stream wait for the compute stream's work so far.
  void OrderAfterCompute();
};

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_NCCL_COMMUNICATOR_H_
