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

  // ZeRO stage 1's collectives. Reduce-scatter, in place, parts of 3 and 5 elements: rank r
  // holds (r + 1) * (i + 1); afterwards its own part (elements [0, 3) on rank 0, [3, 8) on
  // rank 1) holds 3 * (i + 1), in its own place.
  Tensor parts = Tensor::Zeros({8}, DType::kF32, Device::kCpu, MemoryCategory::kGradients);
  for (int i = 0; i < 8; ++i) parts.data<float>()[i] = static_cast<float>((rank + 1) * (i + 1));
  const int64_t calls_before = comm.allreduce_calls();
  comm.ReduceScatterSum(parts, {3, 5});
  bool scatter_ok = true;
  for (int i = rank == 0 ? 0 : 3; i < (rank == 0 ? 3 : 8); ++i) {
    scatter_ok &= parts.data<float>()[i] == 3.0f * static_cast<float>(i + 1);
  }
  Expect(scatter_ok, "ReduceScatterSum leaves each rank the sum of its own part, in place", rank);
  Expect(comm.allreduce_calls() == calls_before + 1, "a reduce-scatter counts as a gradient reduction", rank);
  // An empty part (rank 0 owns nothing) and a part of 128 elements (counted in units of 64).
  Tensor uneven = Tensor::Zeros({128}, DType::kF32, Device::kCpu, MemoryCategory::kGradients);
  for (int i = 0; i < 128; ++i) uneven.data<float>()[i] = static_cast<float>(rank + i);
  comm.ReduceScatterSum(uneven, {0, 128});
  bool uneven_ok = true;
  for (int i = 0; rank == 1 && i < 128; ++i) uneven_ok &= uneven.data<float>()[i] == static_cast<float>(1 + 2 * i);
  Expect(uneven_ok, "ReduceScatterSum with an empty part on rank 0", rank);

  // All-gather, in place, f16 (the half working copy): rank r's part holds r + 1 + i.
  Tensor weights = Tensor::Zeros({192}, DType::kF16, Device::kCpu, MemoryCategory::kWeights);
  std::vector<float> mine(192, -1.0f);
  const int64_t begin = rank == 0 ? 0 : 64, end = rank == 0 ? 64 : 192;
  for (int64_t i = begin; i < end; ++i) mine[i] = static_cast<float>(rank + 1 + i % 7);
  weights.CopyFromFloats(mine);
  comm.AllGather(weights, {64, 128});
  const std::vector<float> gathered_weights = weights.ToFloatVector();
  bool gather_ok = true;
  for (int64_t i = 0; i < 192; ++i) gather_ok &= gathered_weights[i] == static_cast<float>((i < 64 ? 1 : 2) + i % 7);
  Expect(gather_ok, "AllGather gives every rank every rank's part", rank);

  // Gather to rank 0: 2 floats from rank 0, 3 from rank 1, in rank order.
  const std::vector<float> local = rank == 0 ? std::vector<float>{1, 2} : std::vector<float>{3, 4, 5};
  std::vector<float> all(rank == 0 ? 5 : 0);
  comm.GatherToRoot(local.data(), rank == 0 ? all.data() : nullptr, {2, 3}, /*root=*/0);
  Expect(rank != 0 || all == std::vector<float>({1, 2, 3, 4, 5}), "GatherToRoot in rank order", rank);

  std::vector<int> payload(5, rank == 0 ? 42 : -1);
  comm.Broadcast(payload.data(), payload.size() * sizeof(int), /*root=*/0);
  Expect(payload == std::vector<int>(5, 42), "Broadcast from rank 0", rank);
  comm.Barrier();
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace xlmr::distributed

int main() { return xlmr::distributed::Run(); }
