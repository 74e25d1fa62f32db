// CreateCommunicator: the communicator for this process, picked from how it was launched and
// where its gradients live. Kept apart from the Communicator interface (communicator.h) because
// it includes every implementation, and each implementation includes the interface.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_CREATE_COMMUNICATOR_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_CREATE_COMMUNICATOR_H_

#include <memory>

#include "absl/status/statusor.h"
#include "framework/core/device.h"
#include "framework/distributed/communicator.h"
#include "framework/distributed/launch_environment.h"

namespace xlmr::distributed {

// The communicator for this process and the device that holds its gradients.
//   World size 1 (a plain process, or mpirun -np 1), any device: LocalCommunicator, the
//                  identity: no MPI, no NCCL communicator, no collective launched per bucket.
//   Device::kCpu:  MPI when launched by mpirun with more than one rank.
//   Device::kCuda: NCCL, on GPU `env.local_rank` (one rank per GPU, as mpirun numbers the ranks
//                  of each host), with MPI beside it for the host-side collectives and the NCCL
//                  unique id. Unimplemented when this binary was built without CUDA.
// Errors: MPI_Init or NCCL initialisation failing, or no usable GPU for the local rank.
absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const LaunchEnvironment& env,
                                                                 Device device = Device::kCpu);

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_CREATE_COMMUNICATOR_H_
