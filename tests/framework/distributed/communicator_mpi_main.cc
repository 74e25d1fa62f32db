// Run under `mpirun -np 2` by communicator_mpi_test.sh: checks every collective of the MPI
// communicator across two real processes. Exits 0 when all checks pass on this rank.
#include <cstdio>
#include <vector>

#include "framework/distributed/create_communicator.h"

namespace xlmr::distributed {
namespace {

int failures = 0;

void Expect(bool condition, const char* what, int rank) {
  if (!condition) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    ++failures;
  }
}

int Run() {
  absl::StatusOr<LaunchEnvironment> env = ReadLaunchEnvironment();
  if (!env.ok()) {
    std::fprintf(stderr, "%s\n", env.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Communicator>> created = CreateCommunicator(*env);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  Communicator& comm = **created;
  const int rank = comm.rank();
  Expect(env->launched_by_mpi, "mpirun environment detected", rank);
  Expect(comm.world_size() == 2, "world size 2", rank);
  Expect(rank == env->rank, "rank agrees with OMPI_COMM_WORLD_RANK", rank);

  // Rank r holds (r + 1) * i: the sum over ranks 0 and 1 is 3 * i.
  Tensor bucket = Tensor::Zeros({1001}, DType::kF32, Device::kCpu, MemoryCategory::kGradients);
  for (int i = 0; i < 1001; ++i) bucket.data<float>()[i] = static_cast<float>((rank + 1) * i);
  comm.AllReduceSum(bucket);
  bool sum_ok = true;
  for (int i = 0; i < 1001; ++i) sum_ok &= bucket.data<float>()[i] == 3.0f * static_cast<float>(i);
  Expect(sum_ok, "AllReduceSum gives the sum over ranks", rank);
  Expect(comm.allreduce_calls() == 1, "one all-reduce counted", rank);

  Expect(comm.AllTrue(true), "AllTrue(true, true)", rank);
  Expect(!comm.AllTrue(rank == 0), "AllTrue(true, false) is false on every rank", rank);

  double sums[2] = {1.0, static_cast<double>(rank)};
  comm.AllReduceSumDoubles(sums, 2);
  Expect(sums[0] == 2.0 && sums[1] == 1.0, "AllReduceSumDoubles", rank);

  const std::vector<double> gathered = comm.AllGatherDoubles(std::vector<double>(rank + 1, rank));
  Expect(gathered == std::vector<double>({0.0, 1.0, 1.0}), "AllGatherDoubles in rank order", rank);

  std::vector<int> payload(5, rank == 0 ? 42 : -1);
  comm.Broadcast(payload.data(), payload.size() * sizeof(int), /*root=*/0);
  Expect(payload == std::vector<int>(5, 42), "Broadcast from rank 0", rank);
  comm.Barrier();
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace xlmr::distributed

int main() { return xlmr::distributed::Run(); }
