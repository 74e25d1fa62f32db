#include "kernels/cpu/parallel.h"

#include <cblas.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::kernels::cpu {
namespace {

// Before any kernel or ParallelFor has run, OpenBLAS already computes on the calling thread
// (the library sets it when it loads): a GEMM called first thing must not thread itself inside
// our pool (gemm.h). The pool keeps the thread count OpenBLAS had.
TEST(CpuThreadsTest, OpenBlasIsSingleThreadedFromTheStart) {
  EXPECT_EQ(openblas_get_num_threads(), 1);
  EXPECT_GE(CpuThreadCount(), 1);
}

// Every index of [0, n) is visited exactly once, by ranges whose lengths are multiples of the
// grain (except the last range).
TEST(ParallelForTest, CoversTheRangeOnceInWholeGrains) {
  for (int64_t n : {0, 1, 7, 64, 1000, 4097, 100000}) {
    for (int64_t grain : {1, 3, 64, 5000}) {
      std::vector<std::atomic<int>> visits(static_cast<size_t>(n));
      std::atomic<int> ragged_ranges{0};
      ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        EXPECT_EQ(begin % grain, 0) << "n " << n << " grain " << grain;
        if ((end - begin) % grain != 0 && end != n) ++ragged_ranges;
        for (int64_t i = begin; i < end; ++i) ++visits[i];
      });
      EXPECT_EQ(ragged_ranges.load(), 0) << "n " << n << " grain " << grain;
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << "n " << n << " i " << i;
    }
  }
}

// A ParallelFor inside another one runs inline on the calling thread and still covers its range.
TEST(ParallelForTest, NestedLoopsComplete) {
  constexpr int64_t kOuter = 64, kInner = 1000;
  std::vector<std::atomic<int64_t>> sums(kOuter);
  ParallelFor(kOuter, 1, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      ParallelFor(kInner, 10, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) sums[o] += i;
      });
    }
  });
  for (int64_t o = 0; o < kOuter; ++o) EXPECT_EQ(sums[o].load(), kInner * (kInner - 1) / 2);
}

// Many short loops back to back: the pool hands over jobs without losing or repeating parts.
TEST(ParallelForTest, ManyConsecutiveLoops) {
  std::vector<int64_t> values(4096);
  for (int round = 0; round < 2000; ++round) {
    ParallelFor(static_cast<int64_t>(values.size()), 128, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) values[i] += i;
    });
  }
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) ASSERT_EQ(values[i], 2000 * i);
}

TEST(ParallelForTest, ThreadCountIsPositive) { EXPECT_GE(CpuThreadCount(), 1); }

}  // namespace
}  // namespace xlmr::kernels::cpu
