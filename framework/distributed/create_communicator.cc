#include "framework/distributed/create_communicator.h"

#include <utility>

#include "framework/distributed/local_communicator.h"
#include "framework/distributed/mpi_communicator.h"
#if XLMR_WITH_NCCL
#include "framework/distributed/nccl_communicator.h"
#endif

namespace xlmr::distributed {
namespace {

// Host memory collectives: MPI only when there is somebody to talk to (a plain process must
// not call MPI_Init; see launch_environment.h).
absl::StatusOr<std::unique_ptr<Communicator>> CreateHostCommunicator(const LaunchEnvironment& env) {
  if (!env.launched_by_mpi || env.world_size == 1) {
    return std::unique_ptr<Communicator>(new LocalCommunicator());
  }
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> mpi = MpiCommunicator::Create();
  if (!mpi.ok()) return mpi.status();
  return std::unique_ptr<Communicator>(std::move(*mpi));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const LaunchEnvironment& env,
                                                                 Device device) {
  absl::StatusOr<std::unique_ptr<Communicator>> host = CreateHostCommunicator(env);
  // One rank has nobody to exchange gradients with, on any device: the identity is exact and
  // costs nothing, where NCCL would set up a communicator and launch a no-op per bucket.
  if (!host.ok() || device == Device::kCpu || env.world_size == 1) return host;
#if XLMR_WITH_NCCL
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> nccl =
      NcclCommunicator::Create(env, std::move(*host));
  if (!nccl.ok()) return nccl.status();
  return std::unique_ptr<Communicator>(std::move(*nccl));
#else
  return absl::UnimplementedError(
      "GPU gradients need the NCCL communicator, and this binary was built without CUDA");
#endif
}

}  // namespace xlmr::distributed
