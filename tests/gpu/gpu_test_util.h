// Shared pieces of the tests that compare a CUDA op with the CPU backend (tests/gpu/*_test.cc):
// the fixture that skips without a GPU, random inputs, and the two comparisons (bit for bit, and
// within a stated tolerance) with failure messages that name the output, the count of bad
// elements and the first few of them.
//
// Demanding a GPU: with XLMR_REQUIRE_GPU=1 in the environment (`bazel test
// --test_env=XLMR_REQUIRE_GPU=1`, as tools/gpu_verify.sh should run them), "no GPU visible" and
// "the device query failed" FAIL every GPU test instead of skipping it, so a GPU host whose
// driver is broken cannot report a green run that tested nothing. Every GPU test decides through
// XLMR_SKIP_WITHOUT_GPU (directly or through GpuTest), the one place that reads the variable.
#ifndef XLMR_TESTS_GPU_GPU_TEST_UTIL_H_
#define XLMR_TESTS_GPU_GPU_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"

namespace xlmr::testing {

// Binds the process to GPU 0 and poisons uninitialised GPU memory (PoisonUninitializedMemory),
// so that an output element a kernel never writes reads as NaN. Returns "" then, or why there is
// no GPU to use, e.g. on the build machine. Tests call it through XLMR_SKIP_WITHOUT_GPU.
std::string PrepareGpu();

// True when the environment variable XLMR_REQUIRE_GPU is "1": a GPU test must then fail, not
// skip, when PrepareGpu finds no usable GPU.
bool GpuRequired();

// In a test body or SetUp (it returns from the enclosing function): prepares the GPU, and when
// there is none skips the test with the reason, or fails it with the reason when GpuRequired().
#define XLMR_SKIP_WITHOUT_GPU()                                                               \
  do {                                                                                        \
    const std::string xlmr_no_gpu = ::xlmr::testing::PrepareGpu();                            \
    if (!xlmr_no_gpu.empty()) {                                                               \
      if (::xlmr::testing::GpuRequired()) {                                                   \
        GTEST_FAIL() << "XLMR_REQUIRE_GPU=1 but there is no usable GPU: " << xlmr_no_gpu;     \
      }                                                                                       \
      GTEST_SKIP() << xlmr_no_gpu;                                                            \
    }                                                                                         \
  } while (0)

// A fixture whose SetUp is XLMR_SKIP_WITHOUT_GPU.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
};

// A CPU tensor of `shape` and `dtype` (f32|f16|bf16) with values offset + scale * N(0, 1), rounded
// once to dtype; the same seed gives the same values.
Tensor RandomTensor(const Shape& shape, DType dtype, uint32_t seed, float scale = 1.0f,
                    float offset = 0.0f);

// A CPU i32 tensor of `shape` with ids drawn uniformly from [0, vocab_size).
Tensor RandomIds(const Shape& shape, int32_t vocab_size, uint32_t seed);

// The same values on the GPU.
Tensor OnGpu(const Tensor& cpu);

// Every element of `gpu` has exactly the bits of `cpu`'s; same shape and dtype. Either may live
// on either device (a run-to-run check compares two GPU tensors). `what` names the output in
// the failure message.
void ExpectBitEqual(const std::string& what, const Tensor& gpu, const Tensor& cpu);

// Every element of `gpu` is within the tolerance of `cpu`'s; same shape and dtype:
//   |gpu - cpu| <= f32_tolerance * max(|cpu|, 1) + (f16|bf16 tensors: 1 ulp of it at |cpu|).
// That is, a relative error for values of magnitude >= 1 and an absolute one below (inputs are
// O(1), so an error of f32_tolerance on a value near zero is cancellation, not a wrong result);
// for f16 outputs, the fp32 intermediate may differ by that much and its one rounding to f16
// may then land on the neighbouring half. NaN/inf must match in kind.
void ExpectClose(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                 double f32_tolerance);

// max |gpu - cpu| <= tolerance * max(max |cpu|, scale_floor) over the whole tensor (same shape
// and dtype), reporting the worst element; NaN anywhere fails. For outputs whose error is best
// measured against the tensor's scale (GEMM-based results, gradients). `scale_floor` is for an
// output that can be zero in exact arithmetic while its rounding errors are not (its own
// largest element is then noise): the caller passes the scale those errors come from.
// Prints one line "measured <what>: <worst / scale> (bound <tolerance>)" either way, so that a
// GPU run's log holds the figures its tolerances are cut to.
void ExpectCloseToLargest(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                          double tolerance, double scale_floor = 0.0);

// mean |gpu - cpu| <= tolerance * max(max |cpu|, scale_floor) over the whole tensor (same shape
// and dtype): for errors spread over most elements (a missing rounding) rather than large in a
// few. scale_floor as in ExpectCloseToLargest: a tensor that is zero in exact arithmetic (dq and
// dk of one-token sequences) holds rounding noise, measured against the scale it is noise of.
// Prints "measured <what> (mean): ..." like ExpectCloseToLargest.
void ExpectMeanCloseToLargest(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                              double tolerance, double scale_floor = 0.0);

// The spacing of `dtype` values just above |value| rounded to `dtype` (f16: 2^-24 among the
// subnormals, inf beyond the range; bf16: 8 significant bits in float's range); 0 for f32.
double HalfUlp(double value, DType dtype);

// max |t| over a tensor's elements (any device), e.g. the scale_floor above.
double LargestMagnitude(const Tensor& t);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_GPU_GPU_TEST_UTIL_H_
