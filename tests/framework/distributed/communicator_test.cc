#include "framework/distributed/create_communicator.h"

#include <cstdlib>

#include "framework/distributed/local_communicator.h"
#include "gtest/gtest.h"

namespace xlmr::distributed {
namespace {

class LaunchEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                             "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_SIZE", "PMI_RANK"}) {
      unsetenv(name);
    }
  }
};

TEST_F(LaunchEnvironmentTest, PlainProcessIsWorldSizeOneWithoutMpi) {
  absl::StatusOr<LaunchEnvironment> env = ReadLaunchEnvironment();
  ASSERT_TRUE(env.ok());
  EXPECT_FALSE(env->launched_by_mpi);
  EXPECT_EQ(env->world_size, 1);
  absl::StatusOr<std::unique_ptr<Communicator>> comm = CreateCommunicator(*env);
  ASSERT_TRUE(comm.ok());
  EXPECT_EQ((*comm)->world_size(), 1);
}

TEST_F(LaunchEnvironmentTest, ReadsOpenMpiVariables) {
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  absl::StatusOr<LaunchEnvironment> env = ReadLaunchEnvironment();
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->launched_by_mpi);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->local_rank, 1);
}

TEST_F(LaunchEnvironmentTest, MalformedValuesNameTheVariable) {
  setenv("OMPI_COMM_WORLD_SIZE", "two", 1);
  absl::StatusOr<LaunchEnvironment> env = ReadLaunchEnvironment();
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("OMPI_COMM_WORLD_SIZE"), std::string::npos);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  EXPECT_FALSE(ReadLaunchEnvironment().ok());
}

TEST(LocalCommunicatorTest, IdentityCollectivesStillCountAllReduces) {
  LocalCommunicator comm;
  Tensor bucket = Tensor::Zeros({3}, DType::kF32);
  bucket.CopyFromFloats({1.0f, -2.0f, 3.5f});
  comm.AllReduceSum(bucket);
  comm.AllReduceSum(bucket);
  EXPECT_EQ(bucket.ToFloatVector(), (std::vector<float>{1.0f, -2.0f, 3.5f}));
  EXPECT_EQ(comm.allreduce_calls(), 2);
  EXPECT_FALSE(comm.AllTrue(false));
}

}  // namespace
}  // namespace xlmr::distributed
