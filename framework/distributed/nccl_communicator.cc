#include "framework/distributed/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::distributed {
namespace {

using kernels::cuda::CudaContext;

cudaEvent_t CreateOrderingEvent() {
  cudaEvent_t event = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

// NCCL set-up can fail for reasons outside the program (network, driver, topology): a Status
// with NCCL's own explanation rather than a crash.
absl::Status NcclStatus(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " failed: NCCL error ", static_cast<int>(result), " ",
                                          ncclGetErrorString(result), " (", ncclGetLastError(nullptr), ")"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Create(
    const LaunchEnvironment& env, std::unique_ptr<Communicator> host) {
  XLMR_CHECK(host != nullptr);
  absl::StatusOr<CudaContext*> context = CudaContext::Init(env.local_rank);
  if (!context.ok()) {
    return absl::Status(context.status().code(),
                        absl::StrCat("rank ", host->rank(), " (local rank ", env.local_rank,
                                     "): ", context.status().message()));
  }
  ncclUniqueId id;
  if (host->rank() == 0) {
    if (absl::Status status = NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId"); !status.ok()) {
      return status;
    }
  }
  // Every rank takes part in the broadcast, including rank 0 whose id is the source.
  host->Broadcast(&id, sizeof(id), /*root=*/0);
  ncclComm_t comm = nullptr;
  if (absl::Status status = NcclStatus(ncclCommInitRank(&comm, host->world_size(), id, host->rank()),
                                       "ncclCommInitRank");
      !status.ok()) {
    return status;
  }
  CUstream_st* compute = (*context)->compute_stream();
  CUstream_st* communication = (*context)->communication_stream();
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(std::move(host), comm, compute, communication));
}

NcclCommunicator::NcclCommunicator(std::unique_ptr<Communicator> host, ncclComm* comm,
                                   CUstream_st* compute_stream, CUstream_st* communication_stream)
    : host_(std::move(host)),
      comm_(comm),
      compute_stream_(compute_stream),
      communication_stream_(communication_stream),
      grads_ready_(CreateOrderingEvent()),
      reduced_(CreateOrderingEvent()) {}

NcclCommunicator::~NcclCommunicator() {
  CUDA_CHECK(cudaStreamSynchronize(communication_stream_));
  NCCL_CHECK(ncclCommDestroy(comm_));
  CUDA_CHECK(cudaEventDestroy(grads_ready_));
  CUDA_CHECK(cudaEventDestroy(reduced_));
}

void NcclCommunicator::AllReduceSum(Tensor& data) {
  XLMR_CHECK(data.dtype() == DType::kF32 && data.device() == Device::kCuda)
      << "NCCL all-reduce takes f32 buffers in GPU memory";
  // The bucket's gradients are final once the compute stream's work so far has run.
  CUDA_CHECK(cudaEventRecord(grads_ready_, compute_stream_));
  CUDA_CHECK(cudaStreamWaitEvent(communication_stream_, grads_ready_, 0));
  void* values = data.raw_data();
  NCCL_CHECK(ncclAllReduce(values, values, static_cast<size_t>(data.numel()), ncclFloat32, ncclSum,
                           comm_, communication_stream_));
  ++allreduce_calls_;
}

void NcclCommunicator::Abort(int exit_code) {
  host_->Abort(exit_code);
  std::abort();  // not reached; the compiler cannot see [[noreturn]] through the virtual call
}

void NcclCommunicator::WaitForAllReduces() {
  CUDA_CHECK(cudaEventRecord(reduced_, communication_stream_));
  CUDA_CHECK(cudaStreamWaitEvent(compute_stream_, reduced_, 0));
}

}  // namespace xlmr::distributed
