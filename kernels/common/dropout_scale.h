// The factor inverted dropout multiplies kept elements by, shared by the CPU kernels
// (kernels/cpu/{dropout,attention}.cc) and the CUDA kernels (kernels/cuda/{dropout,attention}.cu),
// which compute it on the host and must agree bit for bit.
#ifndef XLMR_KERNELS_COMMON_DROPOUT_SCALE_H_
#define XLMR_KERNELS_COMMON_DROPOUT_SCALE_H_

namespace xlmr::kernels {

// 1 / (1 - p), computed in double and rounded once to fp32.
inline float DropoutScale(float p) {
  return static_cast<float>(1.0 / (1.0 - static_cast<double>(p)));
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_DROPOUT_SCALE_H_
