// What one rank holds for the model's state, with and without ZeRO stage 1 (--zero_stage):
// the table --print_memory_plan prints after the recompute curve, for this run and as a
// prediction for XLM-R large and XL on 8 ranks.
//
// Bytes per rank, for flat buffers of T elements (ParameterStore::total_elements(): the
// parameters with their 64-element alignment padding), W of them in the half window
// (ParameterStore::half_window(): the Linears, not the embeddings), exactly what the allocator
// counts per category (framework/tensor/memory_stats.h):
//   weights     4 T (fp32 masters) + 2 W under --fp16/--bf16 (the half working copy; W = 0 when
//               it is rounded at each read, under --gradient_checkpointing or a budget)
//   gradients   4 T (fp32; whole under stage 1 too: backward writes every gradient, and
//               the reduce-scatter sums each bucket in place)
//   optimizer   8 T (AdamW's two fp32 moments); stage 1: 8 S, S the largest shard,
//               T / N rounded up to 64 elements (framework/distributed/zero_partition.h)
//   activations the recompute plan's predicted peak (framework/recompute), the same under
//               either stage; not predicted for large and XL (it depends on the batch shape
//               and is measured by a probe of the model itself).
// Not counted: the transient host copy of the whole moments on rank 0 while a checkpoint is
// written under stage 1 (docs/DECISIONS.md), the workspace of single ops.
#ifndef XLMR_RECIPES_RANK_MEMORY_H_
#define XLMR_RECIPES_RANK_MEMORY_H_

#include <cstdint>
#include <string>

#include "framework/tensor/dtype.h"
#include "framework/tensor/parameter_store.h"
#include "models/encoder/config.h"

namespace xlmr::recipes {

struct RankMemory {
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer = 0;
  int64_t activations = 0;
  int64_t total() const { return weights + gradients + optimizer + activations; }
};

using FlatSizes = ParameterStore::FlatSizes;

// [in] flat: total a multiple of 64, half_window <= total; zero_stage 0 or 1; world_size >= 1;
// autocast kF32, kF16 or kBF16.
RankMemory PredictRankMemory(const FlatSizes& flat, DType autocast, int zero_stage, int world_size,
                             int64_t activation_bytes);

// The flat buffer sizes of `config`'s model (ParameterStore::SizesOf its parameter layout),
// without allocating it.
FlatSizes FlatSizesOf(const models::EncoderConfig& config);

// XLM-R large and XL (facebook/xlm-roberta-large, facebook/xlm-roberta-xl sizes) with a
// two-label sequence-classification head. XL is a pre-LayerNorm model in Hugging Face
// (XLMRobertaXL); in this layout its parameter count differs by one LayerNorm (2 x 2560 values).
models::EncoderConfig XlmrLargeConfig();
models::EncoderConfig XlmrXlConfig();

// The table: this run's per-rank bytes under stage 0 and 1 on `world_size` ranks, then the
// prediction for large and XL on 8 ranks (activations not included).
std::string FormatRankMemory(const FlatSizes& flat, DType autocast, int world_size, int64_t activation_bytes);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_RANK_MEMORY_H_
