// Where this process sits in a multi-process launch, read from the launcher's environment.
//
// mpirun (OpenMPI) sets OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK}; MPICH/Hydra and Slurm set
// PMI_RANK/PMI_SIZE and SLURM_LOCALID. A plain process has none of them and is world size 1:
// it must never call MPI_Init, because OpenMPI's singleton start needs its install prefix,
// which a relocated copy of the binary (tools/bundle.sh) does not have.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_LAUNCH_ENVIRONMENT_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_LAUNCH_ENVIRONMENT_H_

#include "absl/status/statusor.h"

namespace xlmr::distributed {

struct LaunchEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // index among the ranks on this machine: picks the GPU
  bool launched_by_mpi = false;
};

// Reads the environment; malformed values are an error naming the variable.
absl::StatusOr<LaunchEnvironment> ReadLaunchEnvironment();

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_LAUNCH_ENVIRONMENT_H_
