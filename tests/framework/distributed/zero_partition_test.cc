#include "framework/distributed/zero_partition.h"

#include <cstdint>
#include <vector>

#include "framework/distributed/local_communicator.h"
#include "gtest/gtest.h"

namespace xlmr::distributed {
namespace {

constexpr int64_t kAlign = ParameterStore::kAlignmentElements;

// The shards tile [0, total) in rank order, every boundary a multiple of 64, and no shard
// exceeds S = ceil(total / N) rounded up to 64, so a rank's state is 1/N of the whole plus at
// most 63 elements of padding.
TEST(ZeroPartitionTest, ShardsTileTheBufferAtAlignedBoundaries) {
  for (const int64_t total : std::vector<int64_t>{0, kAlign, 64 * 1000, 1456960 - 64 * 3, 1456960}) {
    for (const int world : {1, 2, 3, 4, 8, 7}) {
      const ZeroPartition partition(total, world);
      const int64_t per_rank = ((total + world - 1) / world + kAlign - 1) / kAlign * kAlign;
      int64_t at = 0;
      for (int r = 0; r < world; ++r) {
        const FlatRange& shard = partition.shard(r);
        EXPECT_EQ(shard.offset, at) << "total " << total << " world " << world << " rank " << r;
        EXPECT_EQ(shard.offset % kAlign, 0);
        EXPECT_LE(shard.size, per_rank);
        at += shard.size;
      }
      EXPECT_EQ(at, total);
      // Every rank but the last owns exactly S while there is enough to own.
      if (total >= world * per_rank) { EXPECT_EQ(partition.shard(0).size, per_rank); }
    }
  }
}

TEST(ZeroPartitionTest, CountsWithinCutARangeAtTheShardBoundaries) {
  const ZeroPartition partition(64 * 10, 3);  // S = 256: [0, 256), [256, 512), [512, 640)
  EXPECT_EQ(partition.ShardSizes(), (std::vector<int64_t>{256, 256, 128}));
  EXPECT_EQ(partition.CountsWithin({0, 640}), (std::vector<int64_t>{256, 256, 128}));
  EXPECT_EQ(partition.CountsWithin({192, 128}), (std::vector<int64_t>{64, 64, 0}));
  EXPECT_EQ(partition.CountsWithin({256, 64}), (std::vector<int64_t>{0, 64, 0}));
  EXPECT_EQ(partition.CountsWithin({448, 192}), (std::vector<int64_t>{0, 64, 128}));
  EXPECT_EQ(partition.CountsWithin({640, 0}), (std::vector<int64_t>{0, 0, 0}));
}

TEST(ZeroPartitionTest, SmallBuffersLeaveTrailingRanksEmpty) {
  const ZeroPartition partition(64 * 2, 4);  // S = 64: two ranks own 64, two own nothing
  EXPECT_EQ(partition.ShardSizes(), (std::vector<int64_t>{64, 64, 0, 0}));
  EXPECT_EQ(partition.shard(3).offset, 128);
}

// One rank: the gather is a copy of the whole shard into a new host buffer.
TEST(ZeroPartitionTest, GatherOnOneRankIsTheShardItself) {
  LocalCommunicator comm;
  const ZeroPartition partition(128, 1);
  Tensor shard = Tensor::Zeros({128}, DType::kF32, Device::kCpu, MemoryCategory::kOptimizer);
  for (int i = 0; i < 128; ++i) shard.data<float>()[i] = 0.5f * static_cast<float>(i);
  const Tensor all = GatherShardsToRoot(comm, partition, shard, /*root=*/0);
  EXPECT_EQ(all.ToFloatVector(), shard.ToFloatVector());
  EXPECT_NE(all.raw_data(), shard.raw_data());
}

}  // namespace
}  // namespace xlmr::distributed
