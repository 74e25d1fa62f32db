// The exact (erf) GELU and its derivative on fp32 arrays, vectorised: erf and exp(-z^2) from
// piecewise polynomials (tools/fit_gelu_tables.py) instead of libm's erff / expf, which ran one
// element at a time and were the CPU step's largest cost after the GEMMs.
//
// Rounding contract (docs/DECISIONS.md, "GELU's erf on the CPU"): the results differ from
// libm's in the last bits. Against a double-precision reference, over a dense sweep of inputs
// (tests/kernels/cpu/gelu_math_test.cc), in units of 2^-24, bound (measured; libm's): erf
// absolute error 1.75 (1.56; 0.83), erf relative error for |z| < 0.5: 3 (2.74), exp(-z^2)
// absolute error 1.5 (1.22; 0.79); GELU forward |error| / max(1, |x|): 2.25 (1.93; 1.71 with
// erff), its derivative: 3 (2.62; 2.22 with erff / expf).
//
// The AVX-512 and AVX2 paths (the widest the CPU has is taken at run time) and the scalar path
// perform the same fp32 operations in the same order with no fused multiply-add (the file is built with
// -ffp-contract=off), so they return the same bits: results depend neither on the CPU nor on
// how the elements are split among threads.
#ifndef XLMR_KERNELS_CPU_GELU_MATH_H_
#define XLMR_KERNELS_CPU_GELU_MATH_H_

#include <cstdint>

namespace xlmr::kernels::cpu {

// [in] x: n floats. [out] y: y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2))). y may alias x.
void GeluForwardF32(const float* x, int64_t n, float* y);

// [in] dy, x: n floats. [out] dx: dx[i] = dy[i] * (Phi(x[i]) + x[i] * phi(x[i])). dx may alias
// dy or x.
void GeluBackwardF32(const float* dy, const float* x, int64_t n, float* dx);

namespace gelu_internal {

// The scalar approximations, for the accuracy test. NaN gives NaN; erf(+-inf) = +-1 and
// exp(-inf^2) = 0.
float Erf(float z);
float ExpNegSquare(float z);

// The paths of the array functions, so that a test can compare them bit for bit. The AVX2
// ones may be called only when CpuSupports(InstructionSet::kAvx2), the AVX-512 ones only when
// CpuSupports(InstructionSet::kAvx512) (instruction_set.h; a CPU with AVX-512 has AVX2).
void GeluForwardScalar(const float* x, int64_t n, float* y);
void GeluBackwardScalar(const float* dy, const float* x, int64_t n, float* dx);
void GeluForwardAvx2(const float* x, int64_t n, float* y);
void GeluBackwardAvx2(const float* dy, const float* x, int64_t n, float* dx);
void GeluForwardAvx512(const float* x, int64_t n, float* y);
void GeluBackwardAvx512(const float* dy, const float* x, int64_t n, float* dx);

}  // namespace gelu_internal
}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_GELU_MATH_H_
