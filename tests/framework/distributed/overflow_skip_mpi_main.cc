// Run under `mpirun -np 2` (communicator_mpi_test.sh): an fp16 overflow on ONE rank makes
// EVERY rank skip the optimizer step, and the replicas stay bitwise identical.
//
// Two ranks train the tiny XLM-R with fp16 autocast, each on its half of an 8-example batch:
//   step 0: same loss scale (1024) on both ranks: a normal step, nobody skips;
//   step 1: rank 1 alone runs at loss scale 2^100, so its scaled gradient overflows fp16 in the
//           backward matrix products (the real fp16 path; rank 0's gradient stays finite):
//           both ranks must report skipped, leave the weights untouched and halve their scale;
//   step 2: rank 1 back at rank 0's scale: both update again.
// Exits 0 when every check passes on this rank.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/distributed/create_communicator.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/train/train_step.h"
#include "models/encoder/init.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::distributed {
namespace {

int failures = 0;

void Expect(bool condition, const std::string& what, int rank) {
  if (!condition) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  } else {
    std::fprintf(stderr, "rank %d: ok: %s\n", rank, what.c_str());
  }
}

// True on every rank when every rank's `weights` equals rank 0's, bit for bit.
bool SameAsRankZero(Communicator& comm, const Tensor& weights) {
  std::vector<char> rank0(weights.bytes());
  if (comm.rank() == 0) std::memcpy(rank0.data(), weights.raw_data(), weights.bytes());
  comm.Broadcast(rank0.data(), rank0.size(), /*root=*/0);
  return comm.AllTrue(std::memcmp(rank0.data(), weights.raw_data(), weights.bytes()) == 0);
}

bool Equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
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
  const int rank = comm.rank();

  const data::TokenizedDataset dataset = testing::TinyDataset(8);
  models::EncoderModel model(testing::TinyXlmrConfig(), Device::kCpu);
  models::InitializeAllWeights(model, 7);
  ParameterStore& store = model.parameters();
  store.EnableHalfCopy(DType::kF16);
  GradientSynchronizer sync(comm, store);
  amp::LossScalerOptions scaler_options;
  scaler_options.init_scale = 1024;
  amp::DynamicLossScaler scaler(scaler_options, /*enabled=*/true);
  optim::AdamW optimizer(store, optim::AdamWOptions{0.9, 0.999, 1e-8, 0.0});
  auto schedule = optim::MakeLrSchedule("constant", 1e-3, 3, 0, 0.0);
  train::TrainStep step(model, sync, scaler, optimizer, *schedule,
                        train::StepSettings{DType::kF16, 1.0, 7, Device::kCpu});
  const std::vector<data::Batch> my_half = {testing::TinyBatch(dataset, 4 * rank, 4)};

  absl::StatusOr<train::StepOutcome> normal = step.Run(0, my_half, 8);
  Expect(normal.ok() && !normal->skipped, "step 0 (same scale on both ranks) is not skipped", rank);
  Expect(SameAsRankZero(comm, store.master()), "weights identical after step 0", rank);

  const std::vector<float> before = store.master().ToFloatVector();
  const float scale_before = scaler.scale();
  if (rank == 1) {
    amp::LossScalerState huge = scaler.GetState();
    huge.scale = std::ldexp(1.0f, 100);
    Expect(scaler.RestoreState(huge).ok(), "rank 1 raises its loss scale to 2^100", rank);
  }
  const float scale_used = scaler.scale();
  absl::StatusOr<train::StepOutcome> overflow = step.Run(1, my_half, 8);
  Expect(overflow.ok() && overflow->skipped, "step 1 is skipped on this rank", rank);
  Expect(overflow.ok() && !overflow->grad_norm.has_value(), "a skipped step reports no grad_norm", rank);
  Expect(Equal(store.master().ToFloatVector(), before), "step 1 left the weights untouched", rank);
  Expect(SameAsRankZero(comm, store.master()), "weights identical after the skipped step", rank);
  Expect(scaler.scale() == scale_used / 2, "the loss scale was halved", rank);

  if (rank == 1) {
    amp::LossScalerState back = scaler.GetState();
    back.scale = scale_before / 2;  // where rank 0 is now
    Expect(scaler.RestoreState(back).ok(), "rank 1 returns to rank 0's loss scale", rank);
  }
  absl::StatusOr<train::StepOutcome> again = step.Run(2, my_half, 8);
  Expect(again.ok() && !again->skipped, "step 2 (same scale again) is not skipped", rank);
  Expect(!Equal(store.master().ToFloatVector(), before), "step 2 updated the weights", rank);
  Expect(SameAsRankZero(comm, store.master()), "weights identical after step 2", rank);
  Expect(comm.allreduce_calls() == 3 * static_cast<int64_t>(store.buckets().size()),
         "one all-reduce per bucket per step, skipped step included", rank);
  comm.Barrier();
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace xlmr::distributed

int main() { return xlmr::distributed::Run(); }
