// Which examples each rank trains on at each micro-step: deterministic shuffling and
// sharding, such that the global batch of every optimizer step is the same whatever the
// split of the global batch size G = P x A x W into per-device batch P, accumulation steps A
// and ranks W.
//
// Epoch e visits the examples in order(e): a permutation of [0, N) drawn by Fisher-Yates from
// std::mt19937_64 seeded with SplitMix64(seed ^ SplitMix64(e)), with unbiased bounded
// integers by rejection (the standard fixes mt19937_64's output sequence; we do not use
// std::uniform_int_distribution, whose algorithm differs between standard libraries), so the
// order is the same on every platform. Without shuffling, order(e) = 0, 1, ..., N - 1.
//
// An epoch has ceil(N / G) optimizer steps (no example is dropped: Hugging Face's
// dataloader_drop_last=False). Step k's global batch is order(e)[k*G, min((k+1)*G, N)). It is
// dealt to micro-steps and ranks in chunks of P: micro-step m of rank r takes
//   global_batch[(m*W + r)*P, (m*W + r + 1)*P), clipped to the batch.
// So in the last, partial step some micro-batches are short and some are EMPTY (e.g. N = 9,
// G = 8: step 1 holds one example, and only micro-step 0 of rank 0 gets it). The trainer must
// still run every micro-step on every rank (collectives stay matched) and weight the loss
// by examples: an empty micro-batch contributes nothing.
//
// Evaluation (EvalBatches): unshuffled; eval step k covers examples [k*P*W, (k+1)*P*W) and
// rank r takes the r-th chunk of P, so every rank runs the same number of steps (the last may
// be short or empty on some ranks) and concatenating step by step, rank by rank, gives the
// examples in file order.
#ifndef XLMR_FRAMEWORK_DATA_BATCH_PLANNER_H_
#define XLMR_FRAMEWORK_DATA_BATCH_PLANNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace xlmr::data {

struct BatchPlanOptions {
  int64_t dataset_size = 0;                 // N
  int64_t per_device_batch_size = 8;        // P, --per_device_train_batch_size
  int64_t gradient_accumulation_steps = 1;  // A, --gradient_accumulation_steps
  int64_t world_size = 1;                   // W
  int64_t rank = 0;                         // r in [0, W)
  uint64_t seed = 42;                       // --seed
  bool shuffle = true;
  // --group_by_length (HF's LengthGroupedSampler): when not empty (one length per example),
  // each epoch's shuffled order is cut into megabatches of kLengthGroupFactor global batches
  // and each megabatch is sorted by length, longest first, so a batch holds examples of
  // similar length and pads little. Global batches stay the same for any P x A x W split.
  std::vector<int64_t> lengths;

  // G = P x A x W: the examples of one optimizer step, all ranks together. The trainer's
  // counts (steps per epoch, the resume check) read it here, so G is computed in one place.
  int64_t global_batch_size() const {
    return per_device_batch_size * gradient_accumulation_steps * world_size;
  }
  // ceil(N / G): optimizer steps per epoch (no example is dropped).
  int64_t steps_per_epoch() const {
    return (dataset_size + global_batch_size() - 1) / global_batch_size();
  }
};

// Global batches per megabatch under group_by_length (HF uses 50).
inline constexpr int64_t kLengthGroupFactor = 50;

// This rank's share of one optimizer step.
struct StepAssignment {
  int64_t global_examples = 0;  // examples in the whole global batch (all ranks): <= G
  // This rank's example indices for each micro-step m = 0..A-1; an entry may be short or empty.
  std::vector<std::vector<int64_t>> micro_batches;
};

class BatchPlanner {
 public:
  // Errors (naming the flag): a non-positive batch size or accumulation count, an empty
  // dataset. World size and rank come from the launcher and are checked as invariants.
  static absl::StatusOr<BatchPlanner> Create(const BatchPlanOptions& options);

  int64_t global_batch_size() const { return options_.global_batch_size(); }  // G = P*A*W
  int64_t steps_per_epoch() const { return options_.steps_per_epoch(); }      // ceil(N / G)

  // The visiting order of `epoch` (>= 0): a permutation of [0, N).
  std::vector<int64_t> EpochOrder(int64_t epoch) const;
  // All examples of optimizer step `step_in_epoch` (in [0, steps_per_epoch())), all ranks.
  std::vector<int64_t> GlobalBatch(int64_t epoch, int64_t step_in_epoch);
  // This rank's micro-batches for that step.
  StepAssignment Assign(int64_t epoch, int64_t step_in_epoch);

 private:
  explicit BatchPlanner(const BatchPlanOptions& options);
  // order(epoch), computed once per epoch (steps of one epoch are asked for in a row).
  const std::vector<int64_t>& CachedOrder(int64_t epoch);
  void GroupByLength(std::vector<int64_t>& order) const;

  BatchPlanOptions options_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> cached_order_;
};

// This rank's evaluation batches (see the header comment): ceil(N / (P*W)) batches on every
// rank, some possibly short or empty. N may be 0 (no batches); P > 0; 0 <= rank < world_size.
std::vector<std::vector<int64_t>> EvalBatches(int64_t dataset_size, int64_t per_device_batch_size,
                                              int64_t world_size, int64_t rank);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_BATCH_PLANNER_H_
