// recompute_bench: activation peak and step time of recompute plans on CPU.
//
// For one model shape and batch shape it trains (TrainStep, one micro-step per step, synthetic
// full-length batches) with every block kept, every block recomputed selectively, every block
// recomputed whole, and the planner's choice for --budget, and prints one Markdown row per
// plan: the probe's predicted activation peak, the measured one (MemoryStats, kActivations,
// peaks reset after collation as the trainer does), and the median step time. The plans take
// turns step by step, so that a change of load on a shared machine affects them alike.
//
//   bazel build -c opt //bench:recompute_bench
//   bazel-bin/bench/recompute_bench --config_json=recipes/data/langid/config.json
//       --batch_size=32 --seq_len=128                       (the embedded default's model)
//   bazel-bin/bench/recompute_bench --hidden_size=768 --num_layers=12 --num_heads=12
//       --intermediate_size=3072 --vocab_size=1000 --batch_size=2 --seq_len=128   (base-shaped)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "framework/amp/loss_scaler.h"
#include "framework/data/collate.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/distributed/local_communicator.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/recompute/memory_budget.h"
#include "framework/recompute/planner.h"
#include "framework/train/train_step.h"
#include "models/encoder/config.h"
#include "models/encoder/init.h"

ABSL_FLAG(std::string, config_json, "", "a Hugging Face config.json; empty: the shape flags below");
ABSL_FLAG(int, hidden_size, 768, "hidden size (without --config_json)");
ABSL_FLAG(int, num_layers, 12, "encoder blocks (without --config_json)");
ABSL_FLAG(int, num_heads, 12, "attention heads (without --config_json)");
ABSL_FLAG(int, intermediate_size, 3072, "feed-forward size (without --config_json)");
ABSL_FLAG(int, vocab_size, 1000, "vocabulary (without --config_json; activations do not depend on it)");
ABSL_FLAG(int64_t, batch_size, 2, "examples per step");
ABSL_FLAG(int64_t, seq_len, 128, "tokens per example (no padding)");
ABSL_FLAG(int, steps, 3, "timed steps per plan (after one untimed warm-up step)");
ABSL_FLAG(std::string, budget, "0.5", "the planner's --activation_memory_budget");
ABSL_FLAG(bool, fp16, false, "fp16 autocast");

namespace xlmr::bench {
namespace {

// The autocast dtype of --fp16 (this benchmark has no --bf16).
DType Autocast() { return absl::GetFlag(FLAGS_fp16) ? DType::kF16 : DType::kF32; }

using recompute::BlockRecompute;
using recompute::PassMemory;
using recompute::RecomputePlan;

models::EncoderConfig ShapeConfig() {
  models::EncoderConfig c;
  c.vocab_size = absl::GetFlag(FLAGS_vocab_size);
  c.hidden_size = absl::GetFlag(FLAGS_hidden_size);
  c.num_hidden_layers = absl::GetFlag(FLAGS_num_layers);
  c.num_attention_heads = absl::GetFlag(FLAGS_num_heads);
  c.intermediate_size = absl::GetFlag(FLAGS_intermediate_size);
  c.max_position_embeddings = 514;
  c.type_vocab_size = 1;
  c.id2label = {"negative", "positive"};
  return c;
}

// A batch of full-length rows of varied tokens (ids in [3, vocab)), labels cycling.
data::Batch SyntheticBatch(const models::EncoderConfig& config, int64_t batch, int64_t seq) {
  data::Batch b;
  b.input_ids = Tensor::Zeros({batch, seq}, DType::kI32);
  b.attention_mask = Tensor::Zeros({batch, seq}, DType::kI32);
  b.labels = Tensor::Zeros({batch}, DType::kI32);
  for (int64_t i = 0; i < batch * seq; ++i) {
    b.input_ids.data<int32_t>()[i] = static_cast<int32_t>(3 + (i * 7919) % (config.vocab_size - 3));
    b.attention_mask.data<int32_t>()[i] = 1;
  }
  for (int64_t i = 0; i < batch; ++i) {
    b.labels.data<int32_t>()[i] = static_cast<int32_t>(i % config.id2label.size());
  }
  b.tokens = batch * seq;
  return b;
}

struct PlanResult {
  std::string name;
  RecomputePlan plan;
  int64_t predicted_peak = 0;
  int64_t measured_peak = 0;
  double median_seconds = 0;
};

// A model's training harness, as the trainer wires it (one rank, one micro-step per step).
class Harness {
 public:
  explicit Harness(models::EncoderModel& model)
      : model_(model),
        sync_(comm_, model.parameters()),
        scaler_(amp::LossScalerOptions{}, /*enabled=*/Autocast() == DType::kF16),
        optimizer_(model.parameters(), optim::AdamWOptions{}),
        schedule_(*optim::MakeLrSchedule("constant", 2e-5, 1000, 0, 0.0)),
        step_(model, sync_, scaler_, optimizer_, schedule_,
              train::StepSettings{Autocast(), 1.0, 42, Device::kCpu}) {}

  // One step under r.plan: records its activation peak (less what the process holds besides
  // the batch, as the trainer's window sees it) and returns its seconds.
  double TimedStep(const data::Batch& batch, PlanResult& r) {
    MemoryStats& stats = MemoryStatsFor(Device::kCpu);
    const int64_t batch_bytes = static_cast<int64_t>(batch.input_ids.bytes() + batch.attention_mask.bytes() +
                                                     batch.labels.bytes());
    const int64_t others = stats.Of(MemoryCategory::kActivations).current - batch_bytes;
    model_.SetRecomputePlan(r.plan);
    stats.ResetPeaks();
    const auto begin = std::chrono::steady_clock::now();
    const auto outcome = step_.Run(step_count_++, {batch}, batch.labels.numel());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (!outcome.ok()) {
      std::fprintf(stderr, "step failed: %s\n", std::string(outcome.status().message()).c_str());
    }
    r.measured_peak = stats.Of(MemoryCategory::kActivations).peak - others;
    return seconds;
  }

 private:
  models::EncoderModel& model_;
  distributed::LocalCommunicator comm_;
  distributed::GradientSynchronizer sync_;
  amp::DynamicLossScaler scaler_;
  optim::AdamW optimizer_;
  optim::LrSchedule schedule_;
  train::TrainStep step_;
  int64_t step_count_ = 0;
};

// One warm-up round, then --steps rounds that each time every plan once (round-robin, so
// that a change of machine load affects every plan alike); the median per plan.
void MeasureAll(models::EncoderModel& model, const data::Batch& batch,
                std::vector<PlanResult>& results) {
  Harness harness(model);
  std::vector<std::vector<double>> seconds(results.size());
  for (int round = 0; round <= absl::GetFlag(FLAGS_steps); ++round) {
    for (size_t p = 0; p < results.size(); ++p) {
      const double elapsed = harness.TimedStep(batch, results[p]);
      if (round > 0) seconds[p].push_back(elapsed);
    }
  }
  for (size_t p = 0; p < results.size(); ++p) {
    std::sort(seconds[p].begin(), seconds[p].end());
    results[p].median_seconds = seconds[p].empty() ? 0.0 : seconds[p][seconds[p].size() / 2];
  }
}

// The planner's plan for --budget, or (when none fits) the lowest-peak plan, named so.
PlanResult BudgetPlan(const PassMemory& memory) {
  const int64_t keep_all = recompute::EvaluatePlan(memory, RecomputePlan{}).peak_bytes;
  const auto budget = recompute::ParseMemoryBudget(absl::GetFlag(FLAGS_budget), "budget");
  if (!budget.ok()) {
    std::fprintf(stderr, "%s\n", std::string(budget.status().message()).c_str());
    std::exit(2);
  }
  const int64_t bytes = budget->ToBytes(keep_all);
  const auto chosen = recompute::ChooseRecomputePlan(memory, bytes);
  if (chosen.has_value()) {
    return PlanResult{absl::StrFormat("planner, budget %s (%s)", absl::GetFlag(FLAGS_budget),
                                      recompute::FormatBytes(bytes)),
                      chosen->plan};
  }
  const recompute::PlannedRecompute lowest = recompute::LowestPeakPlan(memory);
  return PlanResult{absl::StrFormat("planner, budget %s (%s): no plan fits; lowest peak (%.2f)",
                                    absl::GetFlag(FLAGS_budget), recompute::FormatBytes(bytes),
                                    static_cast<double>(lowest.cost.peak_bytes) / keep_all),
                    lowest.plan};
}

int Main() {
  models::EncoderConfig config = ShapeConfig();
  if (!absl::GetFlag(FLAGS_config_json).empty()) {
    auto loaded = models::LoadEncoderConfig(absl::GetFlag(FLAGS_config_json));
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
      return 2;
    }
    config = *loaded;
  }
  const int64_t batch_size = absl::GetFlag(FLAGS_batch_size), seq = absl::GetFlag(FLAGS_seq_len);
  const int layers = static_cast<int>(config.num_hidden_layers);
  models::EncoderModel model(config, Device::kCpu);
  models::InitializeAllWeights(model, 42);
  if (Autocast() != DType::kF32) model.parameters().EnableHalfCopy(Autocast());
  const data::Batch batch = SyntheticBatch(config, batch_size, seq);

  train::PassContext context;
  context.training = true;
  context.autocast = Autocast();
  PassMemory memory = model.MeasurePassMemory({batch_size, seq}, context);
  memory.external_bytes = static_cast<int64_t>(batch.input_ids.bytes() + batch.attention_mask.bytes() +
                                               batch.labels.bytes());
  std::vector<PlanResult> results = {
      {"keep all", RecomputePlan::Uniform(layers, BlockRecompute::kKeep)},
      {"selective all", RecomputePlan::Uniform(layers, BlockRecompute::kSelective)},
      {"full all (--gradient_checkpointing)", RecomputePlan::Uniform(layers, BlockRecompute::kFull)},
      BudgetPlan(memory)};
  std::printf("model: hidden %d, %d layers, %d heads, intermediate %d; batch [%lld, %lld], %s\n\n",
              static_cast<int>(config.hidden_size), layers, static_cast<int>(config.num_attention_heads),
              static_cast<int>(config.intermediate_size), static_cast<long long>(batch_size),
              static_cast<long long>(seq), DTypeName(context.autocast));
  for (PlanResult& r : results) r.predicted_peak = recompute::EvaluatePlan(memory, r.plan).peak_bytes;
  MeasureAll(model, batch, results);
  std::printf("| plan | blocks | predicted peak | measured peak | step time (median of %d) |\n",
              absl::GetFlag(FLAGS_steps));
  std::printf("|---|---|---|---|---|\n");
  for (const PlanResult& r : results) {
    std::printf("| %s | %s | %s (%lld B) | %s (%lld B) | %.3f s |\n", r.name.c_str(),
                r.plan.ToString().c_str(),
                recompute::FormatBytes(r.predicted_peak).c_str(), static_cast<long long>(r.predicted_peak),
                recompute::FormatBytes(r.measured_peak).c_str(), static_cast<long long>(r.measured_peak),
                r.median_seconds);
  }
  return 0;
}

}  // namespace
}  // namespace xlmr::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return xlmr::bench::Main();
}
