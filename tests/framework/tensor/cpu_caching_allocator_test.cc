// The CPU caching allocator (framework/tensor/cpu_caching_allocator.h): bucket sizes, reuse of
// freed blocks, the bound on cached memory, no page faults once a repeated pattern is warm, and
// that tensors on top of it keep their accounting and zero filling.
#include "framework/tensor/cpu_caching_allocator.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "framework/tensor/storage.h"
#include "framework/tensor/tensor.h"

namespace xlmr {
namespace {

long MinorPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST(CpuCachingAllocatorTest, BucketsRoundUpByAtMostAnEighth) {
  EXPECT_EQ(CpuCachingAllocator::BucketBytes(0), 256u);
  EXPECT_EQ(CpuCachingAllocator::BucketBytes(1), 256u);
  EXPECT_EQ(CpuCachingAllocator::BucketBytes(257), 512u);
  EXPECT_EQ(CpuCachingAllocator::BucketBytes(4096), 4096u);
  EXPECT_EQ(CpuCachingAllocator::BucketBytes(4097), 4608u);  // 4096 + 4096 / 8
  EXPECT_EQ(CpuCachingAllocator::BucketBytes(1 << 20), size_t{1} << 20);
  size_t previous = 0;
  for (size_t bytes = 1; bytes < (size_t{64} << 20); bytes = bytes * 9 / 8 + 37) {
    const size_t bucket = CpuCachingAllocator::BucketBytes(bytes);
    EXPECT_GE(bucket, bytes);
    EXPECT_EQ(bucket % CpuCachingAllocator::kAlignment, 0u) << bytes;
    if (bytes > 4096) { EXPECT_LE(bucket, bytes + bytes / 8) << bytes; }
    EXPECT_GE(bucket, previous) << "buckets must grow with the request";
    previous = bucket;
  }
}

TEST(CpuCachingAllocatorTest, FreedBlocksServeTheSameAndSlightlySmallerBuckets) {
  CpuCachingAllocator allocator;
  void* block = allocator.Allocate(1000000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % CpuCachingAllocator::kAlignment, 0u);
  allocator.Free(block);
  EXPECT_EQ(allocator.Allocate(1000000), block);  // same bucket
  allocator.Free(block);
  EXPECT_EQ(allocator.Allocate(900000), block);  // a smaller bucket within kMaxReuseRatio
  allocator.Free(block);
  void* small = allocator.Allocate(200000);  // a fifth: beyond kMaxReuseRatio
  EXPECT_NE(small, block);
  void* large = allocator.Allocate(1200000);  // larger than any cached block
  EXPECT_NE(large, block);
  const CpuCachingAllocator::Counters c = allocator.counters();
  EXPECT_EQ(c.system_allocations, 3);
  EXPECT_EQ(c.reuses, 2);
  allocator.Free(small);
  allocator.Free(large);
}

// Held memory (live + cached) never exceeds the live high-water mark: a request for a new size
// evicts the least recently freed blocks first.
TEST(CpuCachingAllocatorTest, HeldMemoryStaysWithinTheLiveHighWaterMark) {
  CpuCachingAllocator allocator;
  std::vector<void*> first;
  for (int i = 0; i < 4; ++i) first.push_back(allocator.Allocate(1 << 20));
  for (void* b : first) allocator.Free(b);
  EXPECT_EQ(allocator.counters().cached_bytes, 4 << 20);
  // A different size: no cached block fits, so cached ones make room, oldest first.
  std::vector<void*> second;
  for (int i = 0; i < 8; ++i) second.push_back(allocator.Allocate(200000));  // < 1 MiB / 4
  CpuCachingAllocator::Counters c = allocator.counters();
  EXPECT_EQ(c.peak_live_bytes, 4 << 20);  // 8 x 208 KiB buckets fit under the first peak
  EXPECT_LE(c.live_bytes + c.cached_bytes, c.peak_live_bytes);
  EXPECT_GT(c.cached_bytes, 0);  // only as many 1 MiB blocks as needed were evicted
  void* again = allocator.Allocate(1 << 20);
  EXPECT_EQ(again, first[3]) << "the most recently freed 1 MiB block is kept";
  for (void* b : second) allocator.Free(b);
  allocator.Free(again);
  c = allocator.counters();
  EXPECT_EQ(c.live_bytes, 0);
  EXPECT_LE(allocator.PeakReservedBytes(), c.peak_live_bytes);
  allocator.ReleaseCached();
  EXPECT_EQ(allocator.counters().cached_bytes, 0);
}

// A training step's pattern: the same list of sizes (each a little different from step to
// step, as with batches padded to different lengths) allocated, touched and freed, repeated.
// Once warm, no step obtains memory from the system, so it takes no page faults; the memory
// held stays within the live peak.
TEST(CpuCachingAllocatorTest, RepeatedStepsTakeNoPageFaultsOnceWarm) {
  CpuCachingAllocator allocator;
  const std::vector<size_t> sizes = {4 << 20, 1 << 20, 300000, 16 << 20, 77777, 2 << 20};
  auto step = [&](double scale) {
    std::vector<void*> blocks;
    for (size_t bytes : sizes) {
      const size_t n = static_cast<size_t>(static_cast<double>(bytes) * scale);
      void* b = allocator.Allocate(n);
      std::memset(b, 1, n);  // first touch of fresh pages faults
      blocks.push_back(b);
    }
    for (void* b : blocks) allocator.Free(b);
  };
  step(1.0);  // warm: the largest step first, as the cache serves smaller ones from it
  const int64_t warm_allocations = allocator.counters().system_allocations;
  const long faults_before = MinorPageFaults();
  for (int i = 0; i < 20; ++i) step(1.0 - 0.01 * (i % 8));
  const long faults = MinorPageFaults() - faults_before;
  // 20 steps of ~24 MiB of fresh pages would be ~120000 faults; allow a few for the test's
  // own bookkeeping (the vectors).
  EXPECT_LT(faults, 64);
  EXPECT_EQ(allocator.counters().system_allocations, warm_allocations);
  EXPECT_LE(allocator.PeakReservedBytes(), allocator.counters().peak_live_bytes);
}

TEST(CpuCachingAllocatorTest, ConcurrentAllocationsKeepCountersConsistent) {
  CpuCachingAllocator allocator;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&allocator, t] {
      for (int i = 0; i < 2000; ++i) {
        void* b = allocator.Allocate(1000 + 4096 * ((i + t) % 13));
        static_cast<char*>(b)[0] = 1;
        allocator.Free(b);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(allocator.counters().live_bytes, 0);
  EXPECT_EQ(allocator.counters().system_allocations + allocator.counters().reuses, 8000);
}

TEST(CpuCachingAllocatorTest, FreeingAForeignPointerIsFatal) {
  CpuCachingAllocator allocator;
  int not_ours = 0;
  EXPECT_DEATH(allocator.Free(&not_ours), "did not hand out");
}

// The process-wide CPU allocator underneath Tensors: accounting in requested bytes, not
// buckets, and Zeros is zero even on a block a previous tensor dirtied.
TEST(CpuCachingAllocatorTest, TensorsKeepLogicalAccountingAndZeroFilling) {
  MemoryStats& stats = MemoryStatsFor(Device::kCpu);
  const int64_t before = stats.Of(MemoryCategory::kActivations).current;
  {
    Tensor dirty = Tensor::Zeros({1001}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
    EXPECT_EQ(stats.Of(MemoryCategory::kActivations).current - before, 4004);
    float* values = dirty.data<float>();
    for (int i = 0; i < 1001; ++i) values[i] = 3.0f;
  }
  EXPECT_EQ(stats.Of(MemoryCategory::kActivations).current, before);
  const Tensor zeros = Tensor::Zeros({1001}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (float v : zeros.ToFloatVector()) ASSERT_EQ(v, 0.0f);
  EXPECT_GE(AllocatorFor(Device::kCpu).PeakReservedBytes(), 4004);
}

// Tests build without NDEBUG: Tensor::Empty memory reads as NaN until written, even on a block
// that a previous tensor left zero.
TEST(CpuCachingAllocatorTest, EmptyTensorsArePoisonedInTestBuilds) {
  { Tensor zeros = Tensor::Zeros({257}, DType::kF32, Device::kCpu, MemoryCategory::kActivations); }
  const Tensor empty = Tensor::Empty({257}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (float v : empty.ToFloatVector()) ASSERT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace xlmr
