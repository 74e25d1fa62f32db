// What the CPU can check of the step graphs (framework/train/step_graphs.h): the layout key that
// decides which steps share a graph, the memory statistics a replayed step reports, and that a
// CPU step is never captured. The captures and replays themselves run on a GPU
// (tests/gpu/step_graph_test.cc).
//
// The key must tell apart every two steps whose captured work differs: shapes, forms, and a
// packed batch's sequence bounds (its attention, dropout slots and positions are made of them,
// and they are copied into the graph as constants); and it must not tell apart steps that
// differ only in the data a replay reads from the layout's buffers (ids, masks, labels).
#include "framework/train/step_graphs.h"

#include <vector>

#include "framework/data/collate.h"
#include "framework/tensor/memory_stats.h"
#include "gtest/gtest.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::testing {
namespace {

std::vector<int64_t> Range(int64_t first, int64_t count) {
  std::vector<int64_t> indices(count);
  for (int64_t i = 0; i < count; ++i) indices[i] = first + i;
  return indices;
}

TEST(StepLayoutKeyTest, SameShapesShareAKeyOtherShapesAndBoundsDoNot) {
  TinyDataOptions uniform;
  uniform.uniform = true;
  const data::TokenizedDataset fixed = TinyDataset(24, uniform);
  const data::TokenizedDataset varied = TinyDataset(24);
  // Other examples of the same shapes: the same key (they go through the buffers).
  const std::string first = train::StepLayoutKey({TinyBatch(fixed, 0, 6), TinyBatch(fixed, 6, 6)});
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(train::StepLayoutKey({TinyBatch(fixed, 12, 6), TinyBatch(fixed, 18, 6)}), first);
  // Another batch size, another micro-step count, another padded length: other keys.
  EXPECT_NE(train::StepLayoutKey({TinyBatch(fixed, 0, 5), TinyBatch(fixed, 6, 6)}), first);
  EXPECT_NE(train::StepLayoutKey({TinyBatch(fixed, 0, 6)}), first);
  const data::Batch short_rows = TinyBatch(varied, 0, 2), long_rows = TinyBatch(varied, 6, 2);
  ASSERT_NE(short_rows.input_ids.dim(1), long_rows.input_ids.dim(1));
  EXPECT_NE(train::StepLayoutKey({short_rows}), train::StepLayoutKey({long_rows}));
  // Packed: the same token count cut into other sequences is another layout.
  const data::Batch packed = data::CollatePacked(varied, {0, 1, 2});
  const data::Batch reordered = data::CollatePacked(varied, {2, 0, 1});
  ASSERT_EQ(packed.input_ids.numel(), reordered.input_ids.numel());
  EXPECT_NE(train::StepLayoutKey({packed}), train::StepLayoutKey({reordered}));
  EXPECT_EQ(train::StepLayoutKey({data::CollatePacked(fixed, Range(0, 3))}),
            train::StepLayoutKey({data::CollatePacked(fixed, Range(3, 3))}));
  EXPECT_NE(train::StepLayoutKey({packed}), train::StepLayoutKey({TinyBatch(varied, 0, 3)}));
}

TEST(StepLayoutKeyTest, StepsWithAnEmptyShareAreNotCaptured) {
  const data::TokenizedDataset dataset = TinyDataset(8);
  EXPECT_EQ(train::StepLayoutKey({TinyBatch(dataset, 0, 4), TinyBatch(dataset, 4, 0)}), "");
  EXPECT_EQ(train::StepLayoutKey({}), "");
}

TEST(StepGraphsTest, CpuStepsAreNeverCaptured) {
  TinyTrainer trainer;  // CPU, cuda_graphs on by default
  EXPECT_EQ(trainer.train_step().graphs(), nullptr);
}

// A replayed step allocates nothing; its statistics are the captured step's excursion above
// the values current at its launch.
TEST(MemoryStatsTest, ExcursionsReplayAboveTheCurrentValues) {
  MemoryStats stats;
  stats.Allocated(MemoryCategory::kWeights, 100);
  stats.ResetPeaks();
  stats.Allocated(MemoryCategory::kActivations, 40);
  stats.Allocated(MemoryCategory::kWorkspace, 10);
  stats.Released(MemoryCategory::kActivations, 40);
  stats.Allocated(MemoryCategory::kActivations, 25);
  stats.Released(MemoryCategory::kActivations, 25);
  stats.Released(MemoryCategory::kWorkspace, 10);
  const MemoryStats::Excursion excursion = stats.PeaksAboveCurrent();
  EXPECT_EQ(excursion.by_category[static_cast<int>(MemoryCategory::kActivations)], 40);
  EXPECT_EQ(excursion.by_category[static_cast<int>(MemoryCategory::kWorkspace)], 10);
  EXPECT_EQ(excursion.by_category[static_cast<int>(MemoryCategory::kWeights)], 0);
  EXPECT_EQ(excursion.total, 50);  // 100 + 40 + 10 at the highest, not 40 + 10 + 25
  stats.Allocated(MemoryCategory::kWeights, 7);
  stats.ResetPeaks();
  stats.Replay(excursion);
  EXPECT_EQ(stats.Of(MemoryCategory::kActivations).peak, 40);
  EXPECT_EQ(stats.peak_total(), 157);
  EXPECT_EQ(stats.current_total(), 107);
}

}  // namespace
}  // namespace xlmr::testing
