// What every loss kernel returns, CPU (kernels/cpu/loss.h) and CUDA (kernels/cuda/loss.h):
// the summed loss and how many terms it has (the caller's denominator for the mean).
#ifndef XLMR_KERNELS_COMMON_LOSS_TOTALS_H_
#define XLMR_KERNELS_COMMON_LOSS_TOTALS_H_

#include <cstdint>

namespace xlmr::kernels {

struct LossTotals {
  double sum = 0.0;
  int64_t count = 0;
};

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_LOSS_TOTALS_H_
