// Summarize against answers worked out by hand on small recordings (times in nanoseconds):
// nested ops counted once, the host gap as the step's time outside every op, other threads'
// ops left out, and on the device the union of busy intervals clipped to the step.
#include "framework/profile/profile_summary.h"

#include <string>

#include "gtest/gtest.h"

namespace xlmr::profile {
namespace {

HostEvent Step(int64_t number, int64_t begin, int64_t end, uint32_t thread = 0) {
  HostEvent event;
  event.kind = EventKind::kStep;
  event.name = "step " + std::to_string(number);
  event.begin_ns = begin;
  event.end_ns = end;
  event.thread = thread;
  return event;
}

HostEvent Op(const char* name, int64_t id, int64_t begin, int64_t end, uint32_t thread = 0) {
  HostEvent event;
  event.kind = EventKind::kOp;
  event.name = name;
  event.op_class = ClassOfOp(name);
  event.op_id = id;
  event.begin_ns = begin;
  event.end_ns = end;
  event.thread = thread;
  return event;
}

double Seconds(const ProfileSummary& summary, OpClass op_class) {
  for (const TimeRow& row : summary.classes) {
    if (row.op_class == op_class) return row.seconds;
  }
  return -1;
}

int64_t Calls(const ProfileSummary& summary, OpClass op_class) {
  for (const TimeRow& row : summary.classes) {
    if (row.op_class == op_class) return row.calls;
  }
  return -1;
}

double SumOfClasses(const ProfileSummary& summary) {
  double total = 0;
  for (const TimeRow& row : summary.classes) total += row.seconds;
  return total;
}

// Step 3 [0, 100] on thread 0: a Linear [10, 40] holding a copy [20, 30], a LayerNorm [50, 60],
// and an op of thread 1 over the whole step (another thread's work is not this step's time).
// Step 4 [200, 300]: a Linear [200, 300], no gap.
TEST(ProfileSummaryTest, HostTimesAreSelfTimesAndTheGapIsTheUncoveredRest) {
  Recording recording;
  recording.host = {Step(3, 0, 100),          Op("ops::Linear", 0, 10, 40), Op("transfer", 1, 20, 30),
                    Op("ops::LayerNorm", 2, 50, 60), Op("ops::Add", 3, 0, 100, /*thread=*/1),
                    Step(4, 200, 300),         Op("ops::Linear", 4, 200, 300)};
  const ProfileSummary summary = Summarize(recording);
  EXPECT_EQ(summary.steps, 2);
  EXPECT_EQ(summary.first_step, 3);
  EXPECT_EQ(summary.last_step, 4);
  EXPECT_DOUBLE_EQ(summary.step_seconds, 200e-9);
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kGemm), (20 + 100) * 1e-9);  // 30 less the nested copy's 10
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kTransfer), 10e-9);
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kLayerNorm), 10e-9);
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kHostGap), 60e-9);  // 100 - [10, 40] - [50, 60]
  EXPECT_EQ(Seconds(summary, OpClass::kElementwise), -1);        // thread 1's op: no row
  EXPECT_EQ(Calls(summary, OpClass::kGemm), 2);
  EXPECT_DOUBLE_EQ(SumOfClasses(summary), summary.step_seconds);
  ASSERT_FALSE(summary.ops.empty());
  EXPECT_EQ(summary.ops.front().name, "ops::Linear");  // most time first
}

// Step 1 [0, 100]; kernels of a Linear (op 0) [5, 25], of an Add (op 1) [20, 50] on another
// stream, and of no op [90, 120] (clipped to 10 ns). Busy: [5, 50] and [90, 100] = 55 ns.
TEST(ProfileSummaryTest, DeviceTimesAreKernelTimesAndTheGapIsTheIdleDevice) {
  Recording recording;
  recording.device_timing = "test device";
  recording.host = {Step(1, 0, 100), Op("ops::Linear", 0, 0, 2), Op("ops::Add", 1, 2, 4)};
  recording.device = {DeviceEvent{"gemm_kernel", 0, 5, 25, 7, 0}, DeviceEvent{"add_kernel", 1, 20, 50, 8, 0},
                      DeviceEvent{"memset", -1, 90, 120, 7, 64}, DeviceEvent{"late", 0, 150, 160, 7, 0}};
  const ProfileSummary summary = Summarize(recording);
  EXPECT_EQ(summary.timing, "test device");
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kGemm), 20e-9);
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kElementwise), 30e-9);
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kOther), 10e-9);
  EXPECT_DOUBLE_EQ(Seconds(summary, OpClass::kHostGap), 45e-9);
  EXPECT_EQ(Calls(summary, OpClass::kGemm), 1);  // the kernel after the step is not in it
}

TEST(ProfileSummaryTest, OpClassesOfTheModelsOps) {
  EXPECT_EQ(ClassOfOp("ops::VarlenFusedAttentionBackward"), OpClass::kAttentionBackward);
  EXPECT_EQ(ClassOfOp("ops::DropoutRowsBackward"), OpClass::kDropout);
  EXPECT_EQ(ClassOfOp("ops::CrossEntropyLoss"), OpClass::kLoss);
  EXPECT_EQ(ClassOfOp("ops::AccumulateCrossEntropyLoss"), OpClass::kLoss);  // training's loss
  EXPECT_EQ(ClassOfOp("ops::AccumulateMseLoss"), OpClass::kLoss);
  EXPECT_EQ(ClassOfOp("ops::AccumulateCosentLoss"), OpClass::kLoss);
  EXPECT_EQ(ClassOfOp("ops::CosentBackward"), OpClass::kLoss);
  EXPECT_EQ(ClassOfOp("comm::AllReduceSum"), OpClass::kCommunication);
  EXPECT_EQ(ClassOfOp("ops::SelectFirstToken"), OpClass::kOther);
  EXPECT_EQ(ClassOfOp("ops::AdamWStepWithState"), OpClass::kOptimizer);  // the step-state passes
  EXPECT_EQ(ClassOfOp("ops::FinishStepState"), OpClass::kOptimizer);
  EXPECT_EQ(ClassOfOp("ops::FlagNonFiniteAndSumSquares"), OpClass::kOptimizer);
  EXPECT_EQ(ClassOfOp("ops::WriteStepInputs"), OpClass::kOptimizer);
  // The residual site's backward is LayerNorm's work with the dropout folded in, not dropout's
  // (which its name's prefix would give it).
  EXPECT_EQ(ClassOfOp("ops::DropoutAddLayerNorm"), OpClass::kLayerNorm);
  EXPECT_EQ(ClassOfOp("ops::DropoutAddLayerNormBackward"), OpClass::kLayerNorm);
}

}  // namespace
}  // namespace xlmr::profile
