// The arithmetic of sentence-transformers' CoSENTLoss (framework/ops/loss.h, CosentLoss), written
// once for the CPU kernel and the CUDA kernels (__host__ __device__ under nvcc). For scores s [N]
// (already scale * cosine) and labels y [N]:
//
//   loss = log(1 + sum over ordered pairs (i, j) with y[i] < y[j] of exp(s[i] - s[j]))
//
// in double. Ties (y[i] == y[j]) make no pair, nor does a NaN label. Stable form: with
// d_ij = s[i] - s[j] and m = max(0, every included d_ij),
//
//   loss = m + log(exp(-m) + P),   P = sum over the pairs of exp(d_ij - m),
//
// so no exponent is positive and the normaliser Z = exp(-m) + P lies in [1, pairs + 1]. With m = 0
// (no pair gains) it is log1p(P), exact for a tiny P where log(1 + P) would round it away.
// The gradient: d loss / d s[k] = (sum over pairs (k, j) of w_kj) - (sum over pairs (i, k) of w_ik),
// w_ij = exp(d_ij - m) / Z.
//
// The order, fixed here for both backends: row i's sum runs over j = 0..N-1 (CosentRowSum), P adds
// the rows' sums for i = 0..N-1 (CosentPairSum; the CUDA kernel computes the rows in parallel and
// adds them in one thread); the gradient of s[k] walks j = 0..N-1 adding w_kj or
// subtracting w_jk (CosentScoreGradient). m is a max, exact in any order. Every operation is a
// double add, subtract, divide or exp/log/log1p, and the one product (the gradient's scale) feeds
// no sum: nothing a compiler could fuse into a multiply-add. Both backends therefore do the same
// operations in the same order. They agree nearly, not to the last bit: CUDA's libdevice
// exp/log/log1p (1 ulp) and glibc's (< 1 ulp) may round a result differently, so the loss agrees
// to a few double ulps (the differences of a row of N terms and of the N rows' sum add up:
// relative <= about (2N + 4) 2^-52), and the f32 gradient is the same float or its neighbour.
#ifndef XLMR_KERNELS_COMMON_COSENT_H_
#define XLMR_KERNELS_COMMON_COSENT_H_

#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.h"

namespace xlmr::kernels {

// Whether (i, j) is a pair of the loss: strictly lower label first. Ties and NaN make none.
XLMR_HOST_DEVICE inline bool CosentPair(const float* labels, int64_t i, int64_t j) {
  return labels[i] < labels[j];
}

// d_ij = s[i] - s[j] in double (exact for floats of similar magnitude, correctly rounded always).
XLMR_HOST_DEVICE inline double CosentDifference(const float* scores, int64_t i, int64_t j) {
  return static_cast<double>(scores[i]) - static_cast<double>(scores[j]);
}

// max(0, d_ij over row i's pairs): the 0 is the "1 +" term's exponent.
XLMR_HOST_DEVICE inline double CosentRowMax(const float* scores, const float* labels, int64_t n, int64_t i) {
  double row_max = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    if (CosentPair(labels, i, j)) row_max = fmax(row_max, CosentDifference(scores, i, j));
  }
  return row_max;
}

// sum over j = 0..N-1 of row i's exp(d_ij - m).
XLMR_HOST_DEVICE inline double CosentRowSum(const float* scores, const float* labels, int64_t n, int64_t i,
                                            double m) {
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    if (CosentPair(labels, i, j)) sum += exp(CosentDifference(scores, i, j) - m);
  }
  return sum;
}

// P: the rows' sums added for i = 0..N-1, from 0. The one place this order is written; both
// backends add their row sums through it.
XLMR_HOST_DEVICE inline double CosentPairSum(const double* row_sums, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += row_sums[i];
  return sum;
}

// m and P of the whole batch, from which the loss and the gradient's normaliser follow.
struct CosentStats {
  double max = 0.0;       // m
  double pair_sum = 0.0;  // P

  XLMR_HOST_DEVICE double Normaliser() const { return exp(-max) + pair_sum; }  // Z
  XLMR_HOST_DEVICE double Loss() const { return max == 0.0 ? log1p(pair_sum) : max + log(Normaliser()); }
};

// m, then row_sums[i] = CosentRowSum for every row, then P, in one thread. [out] row_sums [n],
// scratch. The CUDA kernel computes m and the rows in parallel (each row by the same function) and
// then P by CosentPairSum, the same operations in the same order.
XLMR_HOST_DEVICE inline CosentStats CosentStatsOf(const float* scores, const float* labels, int64_t n,
                                                  double* row_sums) {
  CosentStats stats;
  for (int64_t i = 0; i < n; ++i) stats.max = fmax(stats.max, CosentRowMax(scores, labels, n, i));
  for (int64_t i = 0; i < n; ++i) row_sums[i] = CosentRowSum(scores, labels, n, i, stats.max);
  stats.pair_sum = CosentPairSum(row_sums, n);
  return stats;
}

// scale * d loss / d s[k], rounded once to float: the pairs (k, j) add exp(d_kj - m), the pairs
// (j, k) subtract exp(d_jk - m), for j = 0..N-1; the total is divided by Z, then scaled.
XLMR_HOST_DEVICE inline float CosentScoreGradient(const float* scores, const float* labels, int64_t n,
                                                  int64_t k, CosentStats stats, float scale) {
  double total = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    if (CosentPair(labels, k, j)) {
      total += exp(CosentDifference(scores, k, j) - stats.max);
    } else if (CosentPair(labels, j, k)) {
      total -= exp(CosentDifference(scores, j, k) - stats.max);
    }
  }
  return static_cast<float>(total / stats.Normaliser() * static_cast<double>(scale));
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_COSENT_H_
