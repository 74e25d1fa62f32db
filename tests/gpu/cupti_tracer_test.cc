// The CUPTI device tracer (kernels/cuda/cupti_tracer.h) on a GPU: under a recording, the
// kernels of an ops::Linear and the copy of a Tensor::ToDevice come back as device events tied
// to their host ops, on the host's clock; the launch and host-wait counts move with what the
// program did.
//
// Clock tolerance: a device event is placed on the host clock by one offset measured at Start,
// to within the few microseconds a cuptiGetTimestamp call takes, and the device's timer ticks
// in steps of up to a microsecond; kClockTolerance (100 us) is well above both and far below a
// kernel's distance from any op but its own in a bug (a wrong offset is typically off by
// seconds or more). Kernels run asynchronously, after their op may have returned, so only their
// beginning is bounded by the op's (begin >= op begin - tolerance), and their end by Stop's.
//
// Skipped without a GPU (failed under XLMR_REQUIRE_GPU=1, tests/gpu/gpu_test_util.h). With a GPU
// but no loadable libcupti the test fails under XLMR_REQUIRE_GPU=1 too (the kit's run.sh puts
// CUPTI's usual folders on LD_LIBRARY_PATH: a host where it is still missing has tested nothing)
// and skips otherwise.
#include "kernels/cuda/cupti_tracer.h"

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "framework/core/device.h"
#include "framework/ops/linear.h"
#include "framework/profile/profiler.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cuda/device_context.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

constexpr int64_t kClockTolerance = 100'000;  // ns

using kernels::cuda::CudaContext;
using kernels::cuda::CuptiTracer;

bool IsKernel(const profile::DeviceEvent& event) {
  return !absl::StartsWith(event.name, "memcpy") && event.name != "memset";
}

// The one host op event named `name` (fails when there is not exactly one).
const profile::HostEvent* OnlyOp(const profile::Recording& recording, const std::string& name) {
  const profile::HostEvent* found = nullptr;
  int count = 0;
  for (const profile::HostEvent& event : recording.host) {
    if (event.kind == profile::EventKind::kOp && event.name == name) found = &event, ++count;
  }
  EXPECT_EQ(count, 1) << "host op events named " << name;
  return count == 1 ? found : nullptr;
}

class CuptiTracerTest : public testing::GpuTest {
 protected:
  void SetUp() override {
    testing::GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(profile::RegisteredDeviceTracer(Device::kCuda), &CuptiTracer::Instance())
        << "CudaContext::Init did not register the CUPTI tracer";
    const std::string& unavailable = CuptiTracer::Instance().unavailable();
    if (!unavailable.empty()) {
      if (testing::GpuRequired()) GTEST_FAIL() << "CUPTI tracer unavailable: " << unavailable;
      GTEST_SKIP() << "CUPTI tracer unavailable: " << unavailable;
    }
  }
};

TEST_F(CuptiTracerTest, KernelsAndCopiesCarryTheirOpsAndTheCountsMove) {
  const Tensor x_cpu = testing::RandomTensor({64, 96}, DType::kF32, 1);
  const Tensor weight = testing::OnGpu(testing::RandomTensor({80, 96}, DType::kF32, 2));
  const Tensor bias = testing::OnGpu(testing::RandomTensor({80}, DType::kF32, 3));
  CudaContext::Current().SynchronizeCompute();  // nothing issued before the recording runs in it

  const int64_t launches_before = CuptiTracer::Instance().KernelLaunches().value();
  std::string why;
  ASSERT_TRUE(profile::StartRecording(Device::kCuda, &why)) << why;
  const int64_t recording_begin = profile::NowNs();
  const Tensor x = x_cpu.ToDevice(Device::kCuda);
  const Tensor y = ops::Linear(x, weight, bias, DType::kF32);
  const profile::Recording recording = profile::StopRecording();
  const int64_t recording_end = profile::NowNs();
  const int64_t launches_after = CuptiTracer::Instance().KernelLaunches().value();

  EXPECT_TRUE(absl::StartsWith(recording.device_timing, "CUPTI activity API"))
      << recording.device_timing;
  ASSERT_FALSE(recording.device.empty()) << "no device events";
  const profile::HostEvent* linear = OnlyOp(recording, "ops::Linear");
  const profile::HostEvent* transfer = OnlyOp(recording, "transfer");
  ASSERT_NE(linear, nullptr);
  ASSERT_NE(transfer, nullptr);

  int64_t kernels = 0, linear_kernels = 0, upload_copies = 0;
  for (const profile::DeviceEvent& event : recording.device) {
    SCOPED_TRACE(event.name);
    EXPECT_LT(event.begin_ns, event.end_ns);
    EXPECT_GE(event.begin_ns, recording_begin - kClockTolerance);
    EXPECT_LE(event.end_ns, recording_end + kClockTolerance);
    if (IsKernel(event)) ++kernels;
    if (event.op_id == linear->op_id) {
      EXPECT_GE(event.begin_ns, linear->begin_ns - kClockTolerance);
      if (IsKernel(event)) ++linear_kernels;
    }
    if (event.op_id == transfer->op_id && event.name == "memcpy HtoD") {
      ++upload_copies;
      EXPECT_EQ(event.bytes, transfer->bytes);
      // Only the beginning: a pageable upload's cudaMemcpy may return once the data is staged,
      // before the DMA to the device has finished.
      EXPECT_GE(event.begin_ns, transfer->begin_ns - kClockTolerance);
    }
  }
  EXPECT_GE(linear_kernels, 1) << "no kernel event carries ops::Linear's op id " << linear->op_id;
  EXPECT_EQ(upload_copies, 1) << "the ToDevice copy's memcpy HtoD event, tied to its op";
  EXPECT_GE(launches_after - launches_before, kernels)
      << "launches counted vs kernels recorded between the two readings";
  std::cout << "recorded " << recording.device.size() << " device events, " << kernels
            << " kernels (" << linear_kernels << " of ops::Linear); launches counted "
            << launches_after - launches_before << "\n";
  (void)y;
}

TEST_F(CuptiTracerTest, SynchronisationAndReadbackAreHostWaits) {
  const Tensor x = testing::OnGpu(testing::RandomTensor({16, 16}, DType::kF32, 4));
  const int64_t waits_before = CuptiTracer::Instance().HostWaits().value();
  CudaContext::Current().SynchronizeCompute();
  const int64_t waits_after_sync = CuptiTracer::Instance().HostWaits().value();
  EXPECT_GE(waits_after_sync - waits_before, 1) << "cudaStreamSynchronize";
  const Tensor back = x.ToDevice(Device::kCpu);
  EXPECT_GE(CuptiTracer::Instance().HostWaits().value() - waits_after_sync, 1)
      << "a device-to-host cudaMemcpy";
  // The counts metrics.jsonl reports are the tracer's.
  const profile::LaunchCounts counts = profile::CountLaunches(Device::kCuda);
  EXPECT_TRUE(counts.kernel_launches.has_value());
  EXPECT_TRUE(counts.host_waits.has_value());
}

TEST_F(CuptiTracerTest, StopWithoutStartAndRestartAreHarmless) {
  EXPECT_TRUE(CuptiTracer::Instance().Stop().empty());
  std::string why;
  ASSERT_TRUE(CuptiTracer::Instance().Start(&why)) << why;
  ASSERT_TRUE(CuptiTracer::Instance().Start(&why)) << why;  // restarts, dropping the first
  const Tensor x = testing::OnGpu(testing::RandomTensor({8, 8}, DType::kF32, 5));
  const std::vector<profile::DeviceEvent> events = CuptiTracer::Instance().Stop();
  EXPECT_FALSE(events.empty()) << "the upload's memcpy";
  for (const profile::DeviceEvent& event : events) {
    EXPECT_EQ(event.op_id, -1) << event.name << ": no recording, no op to tie it to";
  }
}

}  // namespace
}  // namespace xlmr
