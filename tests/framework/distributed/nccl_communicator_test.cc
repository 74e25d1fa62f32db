// NcclCommunicator with one process (world size 1, the identity host communicator): creation
// binds GPU 0, an all-reduce of a GPU bucket over one rank leaves it unchanged and is counted,
// and WaitForAllReduces orders the compute stream after it.
// Tolerance: none; a sum over one rank is the value itself, bit for bit.
// Needs a GPU: skipped (with the reason) when none is visible, e.g. on the build machine, and
// failed instead under XLMR_REQUIRE_GPU=1 (tests/gpu/gpu_test_util.h; require_gpu_test.sh
// checks both on a machine without one).
// Multi-rank NCCL (one GPU per rank) needs a multi-GPU host: not covered here (two processes on
// one GPU are not an option: NCCL refuses two ranks on the same device, "Duplicate GPU detected"). CreateCommunicator
// gives one rank the identity on every device (create_communicator_test.cc).
#include "framework/distributed/nccl_communicator.h"

#include <memory>
#include <vector>

#include "framework/core/device.h"
#include "framework/distributed/local_communicator.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr::distributed {
namespace {

TEST(NcclCommunicatorTest, OneRankAllReduceIsTheIdentityAndCounted) {
  XLMR_SKIP_WITHOUT_GPU();
  LaunchEnvironment env;  // a plain process: rank 0 of 1, local rank 0
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
      NcclCommunicator::Create(env, std::make_unique<LocalCommunicator>());
  ASSERT_TRUE(comm.ok()) << comm.status();
  EXPECT_EQ((*comm)->world_size(), 1);
  EXPECT_FALSE((*comm)->AllReduceBlocksHost());

  Tensor host = Tensor::Zeros({4097}, DType::kF32);
  std::vector<float> values(4097);
  for (int i = 0; i < 4097; ++i) values[i] = 0.25f * static_cast<float>(i) - 100.0f;
  host.CopyFromFloats(values);
  Tensor bucket = host.ToDevice(Device::kCuda, MemoryCategory::kGradients);
  (*comm)->AllReduceSum(bucket);
  (*comm)->WaitForAllReduces();
  EXPECT_EQ(bucket.ToDevice(Device::kCpu).ToFloatVector(), values);
  EXPECT_EQ((*comm)->allreduce_calls(), 1);
  EXPECT_TRUE((*comm)->AllTrue(true));
}

// ZeRO stage 1's collectives over one rank, against the CPU's LocalCommunicator (the identity):
// a reduce-scatter with one part (ncclReduceScatter with a count per rank equal to the whole)
// leaves the bucket as it is and is counted; an all-gather of f32, f16 and bf16 weights
// (ncclAllGather) leaves them as they are. Tolerance: none (bit for bit).
TEST(NcclCommunicatorTest, OneRankReduceScatterAndAllGatherAreTheIdentity) {
  XLMR_SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
      NcclCommunicator::Create(LaunchEnvironment(), std::make_unique<LocalCommunicator>());
  ASSERT_TRUE(comm.ok()) << comm.status();
  std::vector<float> values(4160);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.125f * static_cast<float>(i) - 200.0f;
  Tensor host = Tensor::Zeros({4160}, DType::kF32);
  host.CopyFromFloats(values);
  Tensor bucket = host.ToDevice(Device::kCuda, MemoryCategory::kGradients);
  (*comm)->ReduceScatterSum(bucket, {4160});
  (*comm)->WaitForAllReduces();
  EXPECT_EQ(bucket.ToDevice(Device::kCpu).ToFloatVector(), values);
  EXPECT_EQ((*comm)->allreduce_calls(), 1);
  for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    Tensor weights_host = Tensor::Zeros({4160}, dtype);
    weights_host.CopyFromFloats(values);
    const std::vector<float> rounded = weights_host.ToFloatVector();
    Tensor weights = weights_host.ToDevice(Device::kCuda, MemoryCategory::kWeights);
    (*comm)->AllGather(weights, {4160});
    EXPECT_EQ(weights.ToDevice(Device::kCpu).ToFloatVector(), rounded) << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace xlmr::distributed
