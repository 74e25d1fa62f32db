// Run under `mpirun -np 2` (communicator_mpi_test.sh): the agreement checks of
// rank_agreement.h and replica_check.h across two real processes. Exits 0 when every check
// passes on this rank.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "framework/distributed/create_communicator.h"
#include "framework/distributed/rank_agreement.h"
#include "framework/distributed/replica_check.h"

namespace xlmr::distributed {
namespace {

int failures = 0;

void Expect(bool condition, const std::string& what, int rank) {
  if (!condition) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  }
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void CheckSettings(Communicator& comm) {
  const int rank = comm.rank();
  const std::vector<Setting> same = {{"learning_rate", "2e-05"}, {"seed", "42"}};
  Expect(CheckSettingsMatchRankZero(comm, same).ok(), "identical settings agree", rank);

  // Rank 1 lists them in another order, with another learning rate and an extra flag.
  std::vector<Setting> mine = same;
  if (rank == 1) mine = {{"seed", "42"}, {"learning_rate", "0.001"}, {"extra", "1"}};
  const absl::Status status = CheckSettingsMatchRankZero(comm, mine);
  if (rank == 0) {
    Expect(status.ok(), "rank 0 always agrees with itself", rank);
  } else {
    const std::string message(status.message());
    Expect(absl::IsInvalidArgument(status), "rank 1 sees a difference", rank);
    Expect(Contains(message, "--learning_rate differs from rank 0's (here '0.001', on rank 0 '2e-05')"),
           "names the differing flag and both values: " + message, rank);
    Expect(Contains(message, "--extra exists here but not on rank 0"), "names the extra flag", rank);
    Expect(!Contains(message, "--seed"), "does not name the equal flag", rank);
  }
}

void CheckOutcome(Communicator& comm) {
  const int rank = comm.rank();
  AgreedOutcome ok = AgreeOnOutcome(comm, absl::OkStatus());
  Expect(ok.all_ok && ok.report.empty(), "all OK: nothing to report", rank);

  // Only rank 1 fails: everybody stops, rank 1 says why.
  AgreedOutcome one = AgreeOnOutcome(comm, rank == 1 ? absl::NotFoundError("b.tsv: no such file")
                                                     : absl::OkStatus());
  Expect(!one.all_ok, "one failing rank stops everybody", rank);
  Expect(one.report == (rank == 1 ? "rank 1: b.tsv: no such file" : ""),
         "only the failing rank reports, naming itself: '" + one.report + "'", rank);

  // Both fail the same way: printed once (by rank 0).
  AgreedOutcome both = AgreeOnOutcome(comm, absl::InvalidArgumentError("--seed: bad"));
  Expect(!both.all_ok, "both failing", rank);
  Expect(both.report == (rank == 0 ? "rank 0: --seed: bad" : ""), "the same error is printed once", rank);

  // Both fail differently: each reports its own.
  AgreedOutcome different = AgreeOnOutcome(comm, absl::InternalError(rank == 0 ? "disk full" : "no GPU"));
  Expect(different.report == (rank == 0 ? "rank 0: disk full" : "rank 1: no GPU"),
         "different errors are each printed", rank);
}

void CheckSharedDecision(Communicator& comm) {
  const int rank = comm.rank();
  int calls = 0;
  // Rank 0's answer reaches rank 1, which never runs `decide` (it would answer differently).
  const std::string bytes("resume\0at step 8", 16);
  absl::StatusOr<std::string> value = ShareRankZeroDecision(comm, [&]() -> absl::StatusOr<std::string> {
    ++calls;
    return rank == 0 ? bytes : "rank 1's own view";
  });
  Expect(value.ok() && *value == bytes, "every rank gets rank 0's value, every byte of it", rank);
  Expect(calls == (rank == 0 ? 1 : 0), "only rank 0 decides", rank);
  // Rank 0's error, code and message, on every rank.
  absl::StatusOr<std::string> error = ShareRankZeroDecision(comm, [&]() -> absl::StatusOr<std::string> {
    if (rank == 0) return absl::InvalidArgumentError("--output_dir=out is not empty");
    return std::string("fine");
  });
  Expect(error.status() == absl::InvalidArgumentError("--output_dir=out is not empty"),
         "every rank gets rank 0's error: " + error.status().ToString(), rank);
}

void CheckReplicas(Communicator& comm) {
  const int rank = comm.rank();
  Tensor weights = Tensor::Zeros({1000}, DType::kF32);
  for (int i = 0; i < 1000; ++i) weights.data<float>()[i] = 0.001f * static_cast<float>(i);
  absl::StatusOr<uint64_t> same = CheckReplicasIdentical(comm, weights, "at the start of training");
  Expect(same.ok() && *same == WeightsFingerprint(weights), "identical replicas pass", rank);

  // One ulp on one element of rank 1: bitwise identity is the contract, not closeness.
  if (rank == 1) weights.data<float>()[517] = std::nextafter(weights.data<float>()[517], 1.0f);
  absl::StatusOr<uint64_t> diverged = CheckReplicasIdentical(comm, weights, "after step 3");
  const std::string message(diverged.status().message());
  Expect(absl::IsFailedPrecondition(diverged.status()), "a one-ulp difference fails on every rank", rank);
  Expect(Contains(message, "weights differ across ranks after step 3: rank 1 holds fingerprint 0x"),
         "the message says when and which rank: " + message, rank);
}

int Run() {
  absl::StatusOr<LaunchEnvironment> env = ReadLaunchEnvironment();
  absl::StatusOr<std::unique_ptr<Communicator>> created =
      env.ok() ? CreateCommunicator(*env) : absl::StatusOr<std::unique_ptr<Communicator>>(env.status());
  if (!created.ok() || (*created)->world_size() != 2) {
    std::fprintf(stderr, "needs mpirun -np 2: %s\n", created.status().ToString().c_str());
    return 1;
  }
  Communicator& comm = **created;
  CheckSettings(comm);
  CheckOutcome(comm);
  CheckSharedDecision(comm);
  CheckReplicas(comm);
  comm.Barrier();
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace xlmr::distributed

int main() { return xlmr::distributed::Run(); }
