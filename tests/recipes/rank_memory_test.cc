#include "recipes/rank_memory.h"

#include <vector>

#include "framework/distributed/zero_partition.h"
#include "framework/optim/adamw.h"
#include "framework/tensor/parameter_store.h"
#include "framework/tensor/storage.h"
#include "gtest/gtest.h"
#include "models/encoder/parameter_layout.h"

namespace xlmr::recipes {
namespace {

int64_t Current(MemoryCategory category) { return MemoryStatsFor(Device::kCpu).Of(category).current; }

// The prediction is what the allocator counts when the store, its half copy (held as `mode`
// says: kOnDemand keeps none, so its half window counts for nothing) and the optimizer of rank
// 0's shard are really allocated.
void ExpectPredictionEqualsAllocation(const models::EncoderConfig& config, int ranks, int stage,
                                      ParameterStore::HalfCopy mode) {
  SCOPED_TRACE(testing::Message() << ranks << " ranks, stage " << stage << ", half copy "
                                  << (mode == ParameterStore::HalfCopy::kKept ? "kept" : "on demand"));
  const int64_t weights_before = Current(MemoryCategory::kWeights);
  const int64_t grads_before = Current(MemoryCategory::kGradients);
  const int64_t optimizer_before = Current(MemoryCategory::kOptimizer);
  ParameterStore store(models::MakeParameterLayout(config).specs, Device::kCpu);
  store.EnableHalfCopy(DType::kF16, mode);
  const distributed::ZeroPartition partition(store.total_elements(), ranks);
  const FlatRange shard = stage == 0 ? FlatRange{0, store.total_elements()} : partition.shard(0);
  optim::AdamW optimizer(store, optim::AdamWOptions{}, shard);
  FlatSizes flat = FlatSizesOf(config);
  EXPECT_EQ(flat.total, store.total_elements());
  EXPECT_EQ(flat.half_window, store.half_window().size);
  if (mode == ParameterStore::HalfCopy::kOnDemand) flat.half_window = 0;
  const RankMemory predicted = PredictRankMemory(flat, DType::kF16, stage, ranks, 0);
  EXPECT_EQ(predicted.weights, Current(MemoryCategory::kWeights) - weights_before);
  EXPECT_EQ(predicted.gradients, Current(MemoryCategory::kGradients) - grads_before);
  EXPECT_EQ(predicted.optimizer, Current(MemoryCategory::kOptimizer) - optimizer_before);
  // Stage 1: 1/N of stage 0 within the padding of one 64-element unit per moment and rank.
  const int64_t whole = 8 * store.total_elements();
  if (stage == 1) {
    EXPECT_GE(predicted.optimizer * ranks, whole);
    EXPECT_LT(predicted.optimizer * ranks - whole, ranks * 64 * 8);
  }
}

// A small model: 2 layers of 64, vocabulary 1000.
TEST(RankMemoryTest, PredictionEqualsTheAllocatorsCount) {
  models::EncoderConfig config;
  config.vocab_size = 1000;
  config.hidden_size = 64;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 4;
  config.intermediate_size = 96;
  config.max_position_embeddings = 40;
  for (const int ranks : {1, 2, 4}) {
    for (const int stage : {0, 1}) {
      for (const auto mode : {ParameterStore::HalfCopy::kKept, ParameterStore::HalfCopy::kOnDemand}) {
        ExpectPredictionEqualsAllocation(config, ranks, stage, mode);
      }
    }
  }
}

// XLM-R large with a two-label head: Hugging Face's XLMRobertaForSequenceClassification counts
// 559,892,482 parameters (XLMRobertaModel's 559,890,432 without the pooler it does not use,
// plus the head's 1,051,650); the flat buffers add less than 64 elements per tensor.
TEST(RankMemoryTest, LargeHasHuggingFacesParameterCount) {
  int64_t packed = 0, tensors = 0;
  for (const ParameterSpec& spec : models::MakeParameterLayout(XlmrLargeConfig()).specs) {
    packed += NumElements(spec.shape);
    ++tensors;
  }
  EXPECT_EQ(packed, 559892482);
  EXPECT_GE(FlatSizesOf(XlmrLargeConfig()).total, packed);
  EXPECT_LT(FlatSizesOf(XlmrLargeConfig()).total, packed + 64 * tensors);
  // XL: 3.48 billion in this layout.
  EXPECT_GT(FlatSizesOf(XlmrXlConfig()).total, 3'480'000'000);
  EXPECT_LT(FlatSizesOf(XlmrXlConfig()).total, 3'490'000'000);
}

TEST(RankMemoryTest, TableNamesBothStagesAndThePrediction) {
  const std::string table = FormatRankMemory({64 * 100, 0}, DType::kF32, 4, 1234);
  EXPECT_NE(table.find("4 ranks, fp32"), std::string::npos) << table;
  EXPECT_NE(table.find("--zero_stage=1"), std::string::npos) << table;
  // 6400 elements over 4 ranks: 1600 each, 8 bytes per element of moments.
  EXPECT_NE(table.find("optimizer state             51200            12800"), std::string::npos) << table;
  EXPECT_NE(table.find("prediction on 8 ranks"), std::string::npos) << table;
  EXPECT_NE(table.find("large"), std::string::npos) << table;
  EXPECT_NE(table.find("XL"), std::string::npos) << table;
}

}  // namespace
}  // namespace xlmr::recipes
