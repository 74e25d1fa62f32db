#include "framework/distributed/launch_environment.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace xlmr::distributed {
namespace {

// The integer value of the first set variable among `names`, nullopt if none is set.
absl::StatusOr<std::optional<int>> ReadInt(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = std::getenv(name);
    if (text == nullptr) continue;
    int value = 0;
    if (!absl::SimpleAtoi(text, &value) || value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment variable ", name, "='", text, "': expected a non-negative integer"));
    }
    return std::optional<int>(value);
  }
  return std::optional<int>();
}

}  // namespace

absl::StatusOr<LaunchEnvironment> ReadLaunchEnvironment() {
  auto size = ReadInt({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  auto rank = ReadInt({"OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  auto local_rank = ReadInt({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  for (const auto* read : {&size, &rank, &local_rank}) {
    if (!read->ok()) return read->status();
  }
  LaunchEnvironment env;
  if (!size->has_value()) return env;  // a plain process
  env.launched_by_mpi = true;
  env.world_size = **size;
  env.rank = rank->value_or(0);
  env.local_rank = local_rank->value_or(env.rank);
  if (env.world_size < 1 || env.rank >= env.world_size) {
    return absl::InvalidArgumentError(absl::StrCat("launcher environment: rank ", env.rank,
                                                   " is not below world size ", env.world_size));
  }
  return env;
}

}  // namespace xlmr::distributed
