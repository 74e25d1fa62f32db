#include "framework/tensor/memory_stats.h"

#include <algorithm>

#include "framework/core/check.h"

namespace xlmr {

const char* MemoryCategoryName(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kWeights: return "weights";
    case MemoryCategory::kGradients: return "gradients";
    case MemoryCategory::kOptimizer: return "optimizer";
    case MemoryCategory::kActivations: return "activations";
    case MemoryCategory::kWorkspace: return "workspace";
  }
  return "?";
}

void MemoryStats::Allocated(MemoryCategory category, int64_t bytes) {
  CategoryBytes& c = by_category_[static_cast<int>(category)];
  c.current += bytes;
  c.peak = std::max(c.peak, c.current);
  total_.current += bytes;
  total_.peak = std::max(total_.peak, total_.current);
}

void MemoryStats::Released(MemoryCategory category, int64_t bytes) {
  CategoryBytes& c = by_category_[static_cast<int>(category)];
  c.current -= bytes;
  total_.current -= bytes;
  XLMR_CHECK(c.current >= 0) << MemoryCategoryName(category) << " released more than allocated";
}

void MemoryStats::ResetPeaks() {
  for (CategoryBytes& c : by_category_) c.peak = c.current;
  total_.peak = total_.current;
}

MemoryStats::Excursion MemoryStats::PeaksAboveCurrent() const {
  Excursion excursion;
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    excursion.by_category[c] = by_category_[c].peak - by_category_[c].current;
  }
  excursion.total = total_.peak - total_.current;
  return excursion;
}

void MemoryStats::Replay(const Excursion& excursion) {
  for (int c = 0; c < kNumMemoryCategories; ++c) {
    CategoryBytes& bytes = by_category_[c];
    bytes.peak = std::max(bytes.peak, bytes.current + excursion.by_category[c]);
  }
  total_.peak = std::max(total_.peak, total_.current + excursion.total);
}

}  // namespace xlmr
