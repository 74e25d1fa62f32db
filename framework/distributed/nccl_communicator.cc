#include "framework/distributed/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/profile/profiler.h"
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

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return ncclFloat32;
    case DType::kF16: return ncclFloat16;
    case DType::kBF16: return ncclBfloat16;
    default: break;
  }
  XLMR_CHECK(false) << "NCCL collectives here take f32, f16 or bf16, not " << DTypeName(dtype);
  return ncclFloat32;
}

// The parts' offsets, and whether every part has the same size (NCCL's fixed-count collectives).
std::vector<int64_t> Offsets(const std::vector<int64_t>& counts, int64_t numel, bool& equal) {
  std::vector<int64_t> offsets;
  int64_t at = 0;
  equal = true;
  for (const int64_t count : counts) {
    offsets.push_back(at);
    at += count;
    equal &= count == counts.front();
  }
  XLMR_CHECK(at == numel) << "the parts' counts sum to " << at << ", the buffer has " << numel;
  return offsets;
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
  profile::OpScope op("comm::AllReduceSum", profile::OpKind::kOther, static_cast<int64_t>(data.bytes()));
  XLMR_CHECK(data.dtype() == DType::kF32 && data.device() == Device::kCuda)
      << "NCCL all-reduce takes f32 buffers in GPU memory";
  // The bucket's gradients are final once the compute stream's work so far has run.
  OrderAfterCompute();
  void* values = data.raw_data();
  NCCL_CHECK(ncclAllReduce(values, values, static_cast<size_t>(data.numel()), ncclFloat32, ncclSum,
                           comm_, communication_stream_));
  ++allreduce_calls_;
}

void NcclCommunicator::AllReduceSumStateDoubles(Tensor& data, int64_t first, int64_t count) {
  if (data.device() != Device::kCuda) {
    Communicator::AllReduceSumStateDoubles(data, first, count);
    return;
  }
  profile::OpScope op("comm::AllReduceSumStateDoubles", profile::OpKind::kOther,
                      count * static_cast<int64_t>(sizeof(double)));
  XLMR_CHECK(data.dtype() == DType::kI64 && first >= 0 && count >= 0 && first + count <= data.numel())
      << "AllReduceSumStateDoubles: doubles [" << first << ", " << first + count << ") of an I64 tensor of "
      << data.numel() << " elements";
  if (count == 0) return;
  OrderAfterCompute();
  double* values = reinterpret_cast<double*>(data.data<int64_t>()) + first;
  NCCL_CHECK(ncclAllReduce(values, values, static_cast<size_t>(count), ncclFloat64, ncclSum, comm_,
                           communication_stream_));
  WaitForAllReduces();
}

void NcclCommunicator::OrderAfterCompute() {
  CUDA_CHECK(cudaEventRecord(grads_ready_, compute_stream_));
  CUDA_CHECK(cudaStreamWaitEvent(communication_stream_, grads_ready_, 0));
}

void NcclCommunicator::ReduceScatterSum(Tensor& data, const std::vector<int64_t>& counts) {
  profile::OpScope op("comm::ReduceScatterSum", profile::OpKind::kOther, static_cast<int64_t>(data.bytes()));
  XLMR_CHECK(data.dtype() == DType::kF32 && data.device() == Device::kCuda)
      << "NCCL reduce-scatter takes f32 buffers in GPU memory";
  XLMR_CHECK(static_cast<int>(counts.size()) == world_size()) << "reduce-scatter: one count per rank";
  bool equal = true;
  const std::vector<int64_t> offsets = Offsets(counts, data.numel(), equal);
  OrderAfterCompute();
  float* values = data.data<float>();
  if (equal) {
    // In place as NCCL defines it: recvbuff == sendbuff + rank * recvcount.
    const size_t count = static_cast<size_t>(counts.front());
    NCCL_CHECK(ncclReduceScatter(values, values + rank() * count, count, ncclFloat32, ncclSum, comm_,
                                 communication_stream_));
  } else {
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < world_size(); ++r) {
      if (counts[r] == 0) continue;
      float* part = values + offsets[r];
      NCCL_CHECK(ncclReduce(part, part, static_cast<size_t>(counts[r]), ncclFloat32, ncclSum, r, comm_,
                            communication_stream_));
    }
    NCCL_CHECK(ncclGroupEnd());
  }
  ++allreduce_calls_;
}

void NcclCommunicator::AllGather(Tensor& data, const std::vector<int64_t>& counts) {
  profile::OpScope op("comm::AllGather", profile::OpKind::kOther, static_cast<int64_t>(data.bytes()));
  XLMR_CHECK(data.device() == Device::kCuda) << "NCCL all-gather takes buffers in GPU memory";
  XLMR_CHECK(static_cast<int>(counts.size()) == world_size()) << "all-gather: one count per rank";
  const ncclDataType_t type = NcclType(data.dtype());
  bool equal = true;
  const std::vector<int64_t> offsets = Offsets(counts, data.numel(), equal);
  OrderAfterCompute();
  char* bytes = static_cast<char*>(data.raw_data());
  const size_t element = SizeOf(data.dtype());
  if (equal) {
    // In place: sendbuff == recvbuff + rank * sendcount.
    const size_t count = static_cast<size_t>(counts.front());
    NCCL_CHECK(ncclAllGather(bytes + rank() * count * element, bytes, count, type, comm_, communication_stream_));
  } else {
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < world_size(); ++r) {
      if (counts[r] == 0) continue;
      char* part = bytes + offsets[r] * element;
      NCCL_CHECK(ncclBroadcast(part, part, static_cast<size_t>(counts[r]), type, r, comm_, communication_stream_));
    }
    NCCL_CHECK(ncclGroupEnd());
  }
  WaitForAllReduces();
}

void NcclCommunicator::Abort(int exit_code) {
  host_->Abort(exit_code);
  std::abort();  // not reached; the compiler cannot see [[noreturn]] through the virtual call
}

void NcclCommunicator::WaitForAllReduces() {
  profile::OpScope op("comm::WaitForAllReduces", profile::OpKind::kOther, 0);
  CUDA_CHECK(cudaEventRecord(reduced_, communication_stream_));
  CUDA_CHECK(cudaStreamWaitEvent(compute_stream_, reduced_, 0));
}

}  // namespace xlmr::distributed
