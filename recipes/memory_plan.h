// The recompute plan of xlmr_finetune, from its memory flags (docs/CONTRACT.md):
//
//   neither flag                   every block keeps its activations.
//   --gradient_checkpointing       every block keeps only its input and is recomputed whole
//                                  before its backward ("RRR..."); nothing is measured.
//   --activation_memory_budget=B   the model is probed once at the worst-case micro-batch
//                                  (framework/recompute/memory_model.h): padded, B rows of
//                                  max_seq_length tokens; packed (--padding_free), B
//                                  sequences of T tokens, T the most real tokens any B
//                                  training examples hold (LargestPackedMicroBatch); and the
//                                  planner picks
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
// micro-batches are all of the probed shape (padded: every row full length; packed: T tokens
// each, however they split into sequences); on CPU it includes the trainer's host copies of the
// accumulation window's batches, which live in the same memory. A packed plan is thus sized
// for the data, not for B x max_seq_length: on mixed-length data it holds far less.
#ifndef XLMR_RECIPES_MEMORY_PLAN_H_
#define XLMR_RECIPES_MEMORY_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/core/device.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/recompute/memory_budget.h"
#include "framework/recompute/planner.h"
#include "framework/tensor/parameter_store.h"
#include "framework/train/model_interface.h"
#include "framework/train/objective.h"
#include "recipes/finetune_flags.h"

namespace xlmr::recipes {

// The largest packed micro-batch of a run: its sequences and their real tokens.
struct PackedMicroBatch {
  int64_t sequences = 0;
  int64_t tokens = 0;
};

struct MemoryPlanRequest {
  bool gradient_checkpointing = false;
  std::optional<recompute::MemoryBudget> activation_memory_budget;  // unset: no budget
  bool print_memory_plan = false;
  int64_t batch_size = 8;                   // --per_device_train_batch_size
  int64_t max_seq_length = 128;             // --max_seq_length
  // tokens > 0: the trainer packs micro-batches (--padding_free where the model takes packed
  // inputs) and none holds more than this; tokens 0: padded micro-batches.
  PackedMicroBatch packed;
  train::Objective objective = train::Objective::kSingleLabel;  // the task's (its labels' shape)
  int64_t gradient_accumulation_steps = 1;  // host batches held during a step on CPU
  DType autocast = DType::kF32;  // --fp16 / --bf16 (TrainerOptions::autocast)
  uint64_t seed = 42;
  Device device = Device::kCpu;
  int world_size = 1;  // the ranks of the launch (the per-rank memory table)
};

// The request of `config`'s flags; `packed` as the trainer will batch (default: padded; see
// LargestPackedMicroBatch).
MemoryPlanRequest MemoryPlanRequestFrom(const FinetuneConfig& config, int world_size = 1,
                                        PackedMicroBatch packed = {});

// How the half working copy is held under --fp16/--bf16 (ParameterStore::HalfCopy): rounded
// again at every read when the run trades time for memory (--gradient_checkpointing or
// --activation_memory_budget), kept between steps otherwise.
ParameterStore::HalfCopy HalfCopyFor(const MemoryPlanRequest& request);

// The largest packed micro-batch of `batch_size` examples of `dataset`: its min(batch_size, N)
// longest examples (each cut to max_seq_length), their tokens summed. A bound for every order,
// shuffled, length-grouped or resumed, and every rank; reached when the longest examples meet in
// one micro-batch (--group_by_length brings them together). An empty dataset gives {0, 0}
// (padded: the trainer then refuses it, naming --train_file).
PackedMicroBatch LargestPackedMicroBatch(const data::TokenizedDataset& dataset, int64_t batch_size,
                                         int64_t max_seq_length);

// Applies the plan the request asks for to `model` (see the table above). `is_main`: rank 0,
// the only one that prints. Under fp16/bf16 the model's half working copy of the weights must
// exist (the probe runs the autocast pass). InvalidArgument names --activation_memory_budget
// when no plan fits.
absl::Status ConfigureRecompute(const MemoryPlanRequest& request, train::TrainableModel& model,
                                bool is_main);

// The pieces, for tests and the benchmark.

// Bytes the trainer's host batches of one step hold on CPU at the probed shape, per micro-batch
// (framework/data/collate.h): padded, ids and mask [B,S] i32; packed, ids [T] i32 and
// cu_seqlens [B + 1] i32; labels [B], per token [B,S] or [T], or [2,B] i32 (4 bytes each);
// 0 for another device.
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
