// The summation order of the CPU backend's vectorised double sums: element i goes to partial
// sum i % kSumLanes, each partial sum adds its elements in order, and the partial sums are
// combined pairwise by CombineLanes. The order is fixed by the data's length alone, so a sum
// is the same bits on every instruction set and thread count, and a loop written over the lanes
// vectorises without reassociating anything.
#ifndef XLMR_KERNELS_CPU_LANE_SUMS_H_
#define XLMR_KERNELS_CPU_LANE_SUMS_H_

#include <cstdint>

namespace xlmr::kernels::cpu {

inline constexpr int64_t kSumLanes = 8;

// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
inline double CombineLanes(const double (&lanes)[kSumLanes]) {
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_LANE_SUMS_H_
