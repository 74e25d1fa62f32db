// CreateCommunicator with one rank: the identity (LocalCommunicator) on every device, with or
// without mpirun, so that a single-GPU run builds no NCCL communicator and launches no no-op
// all-reduce per bucket. Runs without a GPU: the factory must not touch the device for one rank.
#include "framework/distributed/create_communicator.h"

#include <memory>

#include "framework/distributed/local_communicator.h"
#include "gtest/gtest.h"

namespace xlmr::distributed {
namespace {

void ExpectIdentity(const LaunchEnvironment& env, Device device) {
  absl::StatusOr<std::unique_ptr<Communicator>> comm = CreateCommunicator(env, device);
  ASSERT_TRUE(comm.ok()) << DeviceName(device) << ": " << comm.status();
  EXPECT_NE(dynamic_cast<LocalCommunicator*>(comm->get()), nullptr) << DeviceName(device);
  EXPECT_EQ((*comm)->world_size(), 1);
}

TEST(CreateCommunicatorTest, OneRankIsTheIdentityOnEveryDevice) {
  LaunchEnvironment plain;  // a plain process: rank 0 of 1
  ExpectIdentity(plain, Device::kCpu);
  ExpectIdentity(plain, Device::kCuda);
}

TEST(CreateCommunicatorTest, MpirunWithOneRankIsTheIdentityToo) {
  LaunchEnvironment env;
  env.launched_by_mpi = true;  // mpirun -np 1: still nobody to talk to, so no MPI_Init
  ExpectIdentity(env, Device::kCpu);
  ExpectIdentity(env, Device::kCuda);
}

}  // namespace
}  // namespace xlmr::distributed
