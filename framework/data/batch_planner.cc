#include "framework/data/batch_planner.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::data {
namespace {

uint64_t SplitMix64(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// Uniform in [0, bound) without modulo bias: draws below 2^64 mod bound are rejected, so the
// accepted range is a whole number of copies of [0, bound).
uint64_t UniformBelow(std::mt19937_64& engine, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;  // == 2^64 mod bound
  while (true) {
    const uint64_t draw = engine();
    if (draw >= threshold) return draw % bound;
  }
}

absl::Status MustBePositive(int64_t value, const char* flag) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(flag, " must be positive, got ", value));
}

// Chunk `chunk` of P examples within [begin, end) of `order`, clipped to it.
std::vector<int64_t> ChunkOf(const std::vector<int64_t>& order, int64_t begin, int64_t end,
                             int64_t chunk, int64_t per_device) {
  const int64_t from = std::min(end, begin + chunk * per_device);
  const int64_t to = std::min(end, from + per_device);
  return std::vector<int64_t>(order.begin() + from, order.begin() + to);
}

}  // namespace

absl::StatusOr<BatchPlanner> BatchPlanner::Create(const BatchPlanOptions& options) {
  absl::Status status =
      MustBePositive(options.per_device_batch_size, "--per_device_train_batch_size");
  if (status.ok()) {
    status = MustBePositive(options.gradient_accumulation_steps, "--gradient_accumulation_steps");
  }
  if (!status.ok()) return status;
  if (options.dataset_size <= 0) {
    return absl::InvalidArgumentError("the training data has no examples (--train_file)");
  }
  XLMR_CHECK(options.world_size > 0 && options.rank >= 0 && options.rank < options.world_size)
      << "rank " << options.rank << " of world size " << options.world_size;
  XLMR_CHECK(options.lengths.empty() || static_cast<int64_t>(options.lengths.size()) == options.dataset_size)
      << "one length per example";
  return BatchPlanner(options);
}

BatchPlanner::BatchPlanner(const BatchPlanOptions& options) : options_(options) {}

std::vector<int64_t> BatchPlanner::EpochOrder(int64_t epoch) const {
  XLMR_CHECK(epoch >= 0) << "epoch " << epoch;
  std::vector<int64_t> order(options_.dataset_size);
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!options_.shuffle) return order;
  std::mt19937_64 engine(SplitMix64(options_.seed ^ SplitMix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = options_.dataset_size - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(UniformBelow(engine, static_cast<uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  if (!options_.lengths.empty()) GroupByLength(order);
  return order;
}

void BatchPlanner::GroupByLength(std::vector<int64_t>& order) const {
  const int64_t megabatch = kLengthGroupFactor * global_batch_size();
  for (int64_t begin = 0; begin < options_.dataset_size; begin += megabatch) {
    const auto first = order.begin() + begin;
    const auto last = order.begin() + std::min(options_.dataset_size, begin + megabatch);
    std::stable_sort(first, last, [this](int64_t a, int64_t b) {
      return options_.lengths[a] > options_.lengths[b];
    });
  }
}

const std::vector<int64_t>& BatchPlanner::CachedOrder(int64_t epoch) {
  if (epoch != cached_epoch_) {
    cached_order_ = EpochOrder(epoch);
    cached_epoch_ = epoch;
  }
  return cached_order_;
}

std::vector<int64_t> BatchPlanner::GlobalBatch(int64_t epoch, int64_t step_in_epoch) {
  XLMR_CHECK(step_in_epoch >= 0 && step_in_epoch < steps_per_epoch())
      << "step " << step_in_epoch << " of " << steps_per_epoch();
  const std::vector<int64_t>& order = CachedOrder(epoch);
  const int64_t begin = step_in_epoch * global_batch_size();
  const int64_t end = std::min(options_.dataset_size, begin + global_batch_size());
  return std::vector<int64_t>(order.begin() + begin, order.begin() + end);
}

StepAssignment BatchPlanner::Assign(int64_t epoch, int64_t step_in_epoch) {
  XLMR_CHECK(step_in_epoch >= 0 && step_in_epoch < steps_per_epoch())
      << "step " << step_in_epoch << " of " << steps_per_epoch();
  const std::vector<int64_t>& order = CachedOrder(epoch);
  const int64_t begin = step_in_epoch * global_batch_size();
  const int64_t end = std::min(options_.dataset_size, begin + global_batch_size());
  StepAssignment assignment;
  assignment.global_examples = end - begin;
  for (int64_t m = 0; m < options_.gradient_accumulation_steps; ++m) {
    const int64_t chunk = m * options_.world_size + options_.rank;
    assignment.micro_batches.push_back(
        ChunkOf(order, begin, end, chunk, options_.per_device_batch_size));
  }
  return assignment;
}

std::vector<std::vector<int64_t>> EvalBatches(int64_t dataset_size, int64_t per_device_batch_size,
                                              int64_t world_size, int64_t rank) {
  XLMR_CHECK(dataset_size >= 0 && per_device_batch_size > 0);
  XLMR_CHECK(world_size > 0 && rank >= 0 && rank < world_size)
      << "rank " << rank << " of world size " << world_size;
  const int64_t step_size = per_device_batch_size * world_size;
  std::vector<std::vector<int64_t>> batches;
  for (int64_t begin = 0; begin < dataset_size; begin += step_size) {
    const int64_t end = std::min(dataset_size, begin + step_size);
    const int64_t from = std::min(end, begin + rank * per_device_batch_size);
    const int64_t to = std::min(end, from + per_device_batch_size);
    std::vector<int64_t> batch(to - from);
    std::iota(batch.begin(), batch.end(), from);
    batches.push_back(std::move(batch));
  }
  return batches;
}

}  // namespace xlmr::data
