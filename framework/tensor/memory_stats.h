// Accounting of allocated bytes per category: current and peak, per device.
//
// Every tensor storage is registered here on allocation and released on destruction, so the
// numbers are exact, not estimates. Metrics report them; the recompute planner and its tests
// rely on the activation peak.
#ifndef XLMR_FRAMEWORK_TENSOR_MEMORY_STATS_H_
#define XLMR_FRAMEWORK_TENSOR_MEMORY_STATS_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace xlmr {

enum class MemoryCategory { kWeights, kGradients, kOptimizer, kActivations, kWorkspace };
inline constexpr int kNumMemoryCategories = 5;

const char* MemoryCategoryName(MemoryCategory category);

struct CategoryBytes {
  int64_t current = 0;
  int64_t peak = 0;
};

// Thread-compatible (the trainer allocates from one thread); one instance per device.
class MemoryStats {
 public:
  void Allocated(MemoryCategory category, int64_t bytes);
  void Released(MemoryCategory category, int64_t bytes);

  const CategoryBytes& Of(MemoryCategory category) const {
    return by_category_[static_cast<int>(category)];
  }
  int64_t current_total() const { return total_.current; }
  int64_t peak_total() const { return total_.peak; }

  // Starts a new peak window: every peak becomes the current value.
  void ResetPeaks();

  // How far the peaks of the window rose above the current values, per category and in total:
  // what a captured step (which frees everything it allocates, and allocates nothing when it
  // is replayed) allocated at its highest.
  struct Excursion {
    std::array<int64_t, kNumMemoryCategories> by_category{};
    int64_t total = 0;
  };
  Excursion PeaksAboveCurrent() const;
  // Raises every peak to at least the current value plus `excursion`: the window's record of a
  // replayed step.
  void Replay(const Excursion& excursion);

 private:
  std::array<CategoryBytes, kNumMemoryCategories> by_category_{};
  CategoryBytes total_;
};

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_MEMORY_STATS_H_
