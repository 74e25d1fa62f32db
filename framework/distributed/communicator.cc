#include "framework/distributed/communicator.h"

#include "framework/distributed/local_communicator.h"
#include "framework/distributed/mpi_communicator.h"

namespace xlmr::distributed {

absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const LaunchEnvironment& env) {
  if (!env.launched_by_mpi || env.world_size == 1) {
    return std::unique_ptr<Communicator>(new LocalCommunicator());
  }
  absl::StatusOr<std::unique_ptr<MpiCommunicator>> mpi = MpiCommunicator::Create();
  if (!mpi.ok()) return mpi.status();
  return std::unique_ptr<Communicator>(std::move(*mpi));
}

}  // namespace xlmr::distributed
