// The agreement checks with one process (no MPI): they cost nothing and report plainly.
// The two-rank behaviour is tested under mpirun by rank_agreement_mpi_main.cc.
#include "framework/distributed/rank_agreement.h"

#include "framework/distributed/local_communicator.h"
#include "framework/distributed/replica_check.h"
#include "gtest/gtest.h"

namespace xlmr::distributed {
namespace {

TEST(RankAgreementTest, OneRankAlwaysAgreesAndReportsWithoutRankPrefix) {
  LocalCommunicator comm;
  EXPECT_TRUE(CheckSettingsMatchRankZero(comm, {{"learning_rate", "1"}}).ok());
  const AgreedOutcome ok = AgreeOnOutcome(comm, absl::OkStatus());
  EXPECT_TRUE(ok.all_ok);
  EXPECT_EQ(ok.report, "");
  const AgreedOutcome failed = AgreeOnOutcome(comm, absl::InvalidArgumentError("--seed: bad"));
  EXPECT_FALSE(failed.all_ok);
  EXPECT_EQ(failed.report, "--seed: bad");
}

TEST(RankAgreementTest, OneRankTakesItsOwnDecision) {
  LocalCommunicator comm;
  EXPECT_EQ(*ShareRankZeroDecision(comm, [] { return absl::StatusOr<std::string>("resume"); }), "resume");
  const absl::StatusOr<std::string> failed =
      ShareRankZeroDecision(comm, [] { return absl::StatusOr<std::string>(absl::InvalidArgumentError("not empty")); });
  EXPECT_EQ(failed.status(), absl::InvalidArgumentError("not empty"));
}

TEST(ReplicaCheckTest, FingerprintSeesEveryBit) {
  Tensor weights = Tensor::Zeros({64}, DType::kF32);
  const uint64_t zeros = WeightsFingerprint(weights);
  weights.data<float>()[63] = -0.0f;  // only the sign bit of the last element
  EXPECT_NE(WeightsFingerprint(weights), zeros);
  LocalCommunicator comm;
  absl::StatusOr<uint64_t> checked = CheckReplicasIdentical(comm, weights, "after step 1");
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ(*checked, WeightsFingerprint(weights));
}

}  // namespace
}  // namespace xlmr::distributed
