// CuptiTracer's contract wherever it runs, GPU or not: when it cannot trace (no libcupti, no
// driver, CUPTI refusing the subscription) its counts are unknown (nullopt), Start fails with the
// same reason and Stop returns nothing; when it can, the counts are known and never decrease.
// On the build machine (no driver) this exercises the first half, without crashing on a host
// where CUPTI cannot work; the GPU kit exercises the second.
#include "kernels/cuda/cupti_tracer.h"

#include <cstdint>
#include <iostream>
#include <string>

#include "gtest/gtest.h"

namespace xlmr {
namespace {

using kernels::cuda::CuptiTracer;

TEST(CuptiTracerContractTest, UnavailableMeansUnknownCountsAndNoRecording) {
  CuptiTracer& tracer = CuptiTracer::Instance();
  std::cout << "CUPTI tracer: "
            << (tracer.unavailable().empty() ? "available" : "unavailable: " + tracer.unavailable())
            << "\n";
  if (!tracer.unavailable().empty()) {
    EXPECT_FALSE(tracer.KernelLaunches().has_value());
    EXPECT_FALSE(tracer.HostWaits().has_value());
    std::string why;
    EXPECT_FALSE(tracer.Start(&why));
    EXPECT_EQ(why, tracer.unavailable());
    EXPECT_FALSE(tracer.Start(nullptr));  // no reason asked for: still refuses
    EXPECT_TRUE(tracer.Stop().empty());
    return;
  }
  ASSERT_TRUE(tracer.KernelLaunches().has_value());
  ASSERT_TRUE(tracer.HostWaits().has_value());
  const int64_t launches = *tracer.KernelLaunches(), waits = *tracer.HostWaits();
  EXPECT_GE(launches, 0);
  EXPECT_GE(waits, 0);
  EXPECT_GE(*tracer.KernelLaunches(), launches);
  EXPECT_GE(*tracer.HostWaits(), waits);
}

TEST(CuptiTracerContractTest, InstanceIsOneTracer) {
  EXPECT_EQ(&CuptiTracer::Instance(), &CuptiTracer::Instance());
  EXPECT_EQ(CuptiTracer::Instance().Describe().rfind("CUPTI activity API", 0), 0u);
}

}  // namespace
}  // namespace xlmr
