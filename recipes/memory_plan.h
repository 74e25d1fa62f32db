// The recompute plan of xlmr_finetune, from its memory flags (docs/CONTRACT.md):
//
//   neither flag                   every block keeps its activations.
//   --gradient_checkpointing       every block keeps only its input and is recomputed whole
//                                  before its backward ("RRR..."); nothing is measured.
//   --activation_memory_budget=B   the model is probed once at the worst-case batch shape
//                                  [per_device_train_batch_size, max_seq_length]
//                                  (framework/recompute/memory_model.h), and the planner picks
//                                  the plan with the least recompute whose predicted activation
//                                  peak is <= B (bytes, or a fraction of the keep-everything
//                                  peak; framework/recompute/memory_budget.h). Rank 0 prints the
//                                  plan, its predicted peak and its recompute on stderr. When no
//                                  plan fits, the run stops before training with one line naming
//                                  the flag and the smallest budget that would fit (exit 2).
//   both                           the budget wins and a line says so: the budget states the
//                                  memory the user can give, so honouring it exactly is the more
//                                  specific request, and when recomputing every block is what it
//                                  takes, the planner chooses exactly that. Running the budget's
//                                  cheaper plan instead of "RRR..." never uses more memory than
//                                  the user allowed.
//   --print_memory_plan            rank 0 prints the whole memory/recompute trade-off curve (the
//                                  Pareto front; the budget's choice marked when one is given) on
//                                  stdout, then the per-rank bytes of weights, gradients,
//                                  optimizer state and activations with and without ZeRO stage 1
//                                  and the prediction for XLM-R large and XL on 8 ranks
//                                  (recipes/rank_memory.h); the caller then exits 0 without
//                                  training.
//
// The predicted peak is what metrics.jsonl reports as peak_activation_bytes for a step whose
// micro-batches are all full length; on CPU it includes the trainer's host copies of the
// accumulation window's batches, which live in the same memory.
#ifndef XLMR_RECIPES_MEMORY_PLAN_H_
#define XLMR_RECIPES_MEMORY_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/core/device.h"
#include "framework/recompute/memory_budget.h"
#include "framework/recompute/planner.h"
#include "framework/train/model_interface.h"
#include "recipes/finetune_flags.h"

namespace xlmr::recipes {

struct MemoryPlanRequest {
  bool gradient_checkpointing = false;
  std::optional<recompute::MemoryBudget> activation_memory_budget;  // unset: no budget
  bool print_memory_plan = false;
  int64_t batch_size = 8;                   // --per_device_train_batch_size
  int64_t max_seq_length = 128;             // --max_seq_length
  int64_t gradient_accumulation_steps = 1;  // host batches held during a step on CPU
  DType autocast = DType::kF32;  // --fp16 / --bf16 (TrainerOptions::autocast)
  uint64_t seed = 42;
  Device device = Device::kCpu;
  int world_size = 1;  // the ranks of the launch (the per-rank memory table)
};

MemoryPlanRequest MemoryPlanRequestFrom(const FinetuneConfig& config, int world_size = 1);

// Applies the plan the request asks for to `model` (see the table above). `is_main`: rank 0,
// the only one that prints. Under fp16/bf16 the model's half working copy of the weights must
// exist (the probe runs the autocast pass). InvalidArgument names --activation_memory_budget
// when no plan fits.
absl::Status ConfigureRecompute(const MemoryPlanRequest& request, train::TrainableModel& model,
                                bool is_main);

// The pieces, for tests and the benchmark.

// Bytes the trainer's host batches of one step hold on CPU (data::Collate: ids and mask
// [B,S] i32, labels [B] i32, per micro-batch); 0 for another device.
int64_t HostBatchBytes(const MemoryPlanRequest& request);

// The probe's measurements at the request's worst-case shape, host batches included.
recompute::PassMemory MeasureForRequest(const MemoryPlanRequest& request,
                                        train::TrainableModel& model);

struct BudgetedPlan {
  recompute::PlannedRecompute planned;
  int64_t budget_bytes = 0;  // the budget resolved to bytes
};

// The plan for request.activation_memory_budget (which must be set), or InvalidArgument naming
// the flag when no plan fits (with the smallest budget that would;
// framework/recompute/plan_report.h words the report).
absl::StatusOr<BudgetedPlan> PlanForBudget(const MemoryPlanRequest& request,
                                           const recompute::PassMemory& memory);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_MEMORY_PLAN_H_
