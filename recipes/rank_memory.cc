#include "recipes/rank_memory.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/core/check.h"
#include "framework/distributed/zero_partition.h"
#include "framework/tensor/parameter_store.h"
#include "models/encoder/parameter_layout.h"

namespace xlmr::recipes {
namespace {

std::string GiB(int64_t bytes) { return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / (1 << 30)); }

const char* PrecisionName(DType autocast) {
  return autocast == DType::kF16 ? "fp16" : autocast == DType::kBF16 ? "bf16" : "fp32";
}

}  // namespace

RankMemory PredictRankMemory(const FlatSizes& flat, DType autocast, int zero_stage, int world_size,
                             int64_t activation_bytes) {
  XLMR_CHECK(zero_stage == 0 || zero_stage == 1) << "zero_stage " << zero_stage;
  const int64_t total_elements = flat.total;
  RankMemory m;
  m.weights = 4 * total_elements + (autocast == DType::kF32 ? 0 : 2 * flat.half_window);
  m.gradients = 4 * total_elements;
  const int64_t optimizer_elements =
      zero_stage == 0 ? total_elements : distributed::ZeroPartition(total_elements, world_size).shard(0).size;
  m.optimizer = 2 * 4 * optimizer_elements;
  m.activations = activation_bytes;
  return m;
}

FlatSizes FlatSizesOf(const models::EncoderConfig& config) {
  return ParameterStore::SizesOf(models::MakeParameterLayout(config).specs);
}

models::EncoderConfig XlmrLargeConfig() {
  models::EncoderConfig c;
  c.vocab_size = 250002;
  c.hidden_size = 1024;
  c.num_hidden_layers = 24;
  c.num_attention_heads = 16;
  c.intermediate_size = 4096;
  c.max_position_embeddings = 514;
  c.type_vocab_size = 1;
  return c;
}

models::EncoderConfig XlmrXlConfig() {
  models::EncoderConfig c = XlmrLargeConfig();
  c.vocab_size = 250880;
  c.hidden_size = 2560;
  c.num_hidden_layers = 36;
  c.num_attention_heads = 32;
  c.intermediate_size = 10240;
  return c;
}

std::string FormatRankMemory(const FlatSizes& flat, DType autocast, int world_size, int64_t activation_bytes) {
  const RankMemory zero0 = PredictRankMemory(flat, autocast, 0, world_size, activation_bytes);
  const RankMemory zero1 = PredictRankMemory(flat, autocast, 1, world_size, activation_bytes);
  std::string out = absl::StrFormat("\nper-rank memory (bytes), %d %s, %s:\n  %-16s %16s %16s\n", world_size,
                                    world_size == 1 ? "rank" : "ranks", PrecisionName(autocast), "",
                                    "--zero_stage=0", "--zero_stage=1");
  const auto row = [&](const char* name, int64_t a, int64_t b) {
    absl::StrAppendFormat(&out, "  %-16s %16d %16d\n", name, a, b);
  };
  row("weights", zero0.weights, zero1.weights);
  row("gradients", zero0.gradients, zero1.gradients);
  row("optimizer state", zero0.optimizer, zero1.optimizer);
  row("activations", zero0.activations, zero1.activations);
  row("total", zero0.total(), zero1.total());
  constexpr int kRanks = 8;
  absl::StrAppendFormat(&out, "prediction on %d ranks, %s, activations not included:\n  %-8s %14s %12s %12s %22s %22s\n",
                        kRanks, PrecisionName(autocast), "model", "elements", "weights", "gradients",
                        "optimizer stage 0 / 1", "total stage 0 / 1");
  for (const auto& [name, config] : {std::pair{"large", XlmrLargeConfig()}, std::pair{"XL", XlmrXlConfig()}}) {
    const FlatSizes sizes = FlatSizesOf(config);
    const int64_t elements = sizes.total;
    const RankMemory a = PredictRankMemory(sizes, autocast, 0, kRanks, 0);
    const RankMemory b = PredictRankMemory(sizes, autocast, 1, kRanks, 0);
    absl::StrAppendFormat(&out, "  %-8s %14d %12s %12s %22s %22s\n", name, elements, GiB(a.weights), GiB(a.gradients),
                          absl::StrCat(GiB(a.optimizer), " / ", GiB(b.optimizer)),
                          absl::StrCat(GiB(a.total()), " / ", GiB(b.total())));
  }
  return out;
}

}  // namespace xlmr::recipes
