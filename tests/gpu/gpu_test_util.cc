#include "tests/gpu/gpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "framework/core/device.h"
#include "framework/tensor/half.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::testing {
namespace {

constexpr int kExamplesShown = 8;

// The distance between |value| rounded to f16 and the next larger f16 (inf beyond the range).
double HalfUlpAt(float value) {
  const Half half = FloatToHalf(std::fabs(value));
  if ((half.bits & 0x7c00u) == 0x7c00u) return INFINITY;
  const float next = HalfToFloat(Half{static_cast<uint16_t>(half.bits + 1)});
  return static_cast<double>(next) - HalfToFloat(half);
}

// The same for bf16.
double BFloat16UlpAt(float value) {
  const BFloat16 rounded = FloatToBFloat16(std::fabs(value));
  if ((rounded.bits & 0x7f80u) == 0x7f80u) return INFINITY;
  const float next = BFloat16ToFloat(BFloat16{static_cast<uint16_t>(rounded.bits + 1)});
  return static_cast<double>(next) - BFloat16ToFloat(rounded);
}

bool SameKind(float a, float b) {
  return std::isnan(a) == std::isnan(b) && std::isinf(a) == std::isinf(b) &&
         (!std::isinf(a) || a == b);
}

// Compares the float values of two tensors with `allowed(cpu)`; EXPECTs no mismatch.
template <typename Allowed>
void CompareValues(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                   Allowed allowed, const std::string& rule) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what << ": shape";
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what << ": dtype";
  const std::vector<float> got = gpu.ToFloatVector();
  const std::vector<float> want = cpu.ToFloatVector();
  int64_t mismatches = 0;
  double worst = 0.0;
  std::ostringstream examples;
  for (size_t i = 0; i < want.size(); ++i) {
    const double error = std::fabs(static_cast<double>(got[i]) - want[i]);
    const bool finite = std::isfinite(want[i]) && std::isfinite(got[i]);
    const bool ok = finite ? error <= allowed(want[i]) : SameKind(got[i], want[i]);
    if (finite) worst = std::max(worst, error / std::max(1.0, std::fabs(double{want[i]})));
    if (ok) continue;
    if (++mismatches <= kExamplesShown) {
      examples << "\n  [" << i << "] gpu " << got[i] << ", cpu " << want[i] << ", |diff| "
               << error << ", allowed " << allowed(want[i]);
    }
  }
  EXPECT_EQ(mismatches, 0) << what << " " << DTypeName(cpu.dtype()) << " "
                           << ShapeString(cpu.shape()) << ": " << mismatches << " of "
                           << want.size() << " elements outside " << rule
                           << " (worst scaled error " << worst << ")" << examples.str();
}

}  // namespace

std::string PrepareGpu() {
  const GpuInventory gpus = QueryGpus();
  if (gpus.count == 0) return gpus.reason;
  absl::StatusOr<kernels::cuda::CudaContext*> context = kernels::cuda::CudaContext::Init(0);
  EXPECT_TRUE(context.ok()) << context.status();
  if (!context.ok()) return std::string(context.status().message());
  // Uninitialised outputs read as NaN: a kernel that skips an element fails its comparison.
  kernels::cuda::PoisonUninitializedMemory(true);
  return "";
}

bool GpuRequired() {
  const char* value = std::getenv("XLMR_REQUIRE_GPU");
  return value != nullptr && std::string(value) == "1";
}

void GpuTest::SetUp() { XLMR_SKIP_WITHOUT_GPU(); }

Tensor RandomTensor(const Shape& shape, DType dtype, uint32_t seed, float scale, float offset) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = offset + scale * normal(rng);
  Tensor t = Tensor::Zeros(shape, dtype, Device::kCpu);
  t.CopyFromFloats(values);
  return t;
}

Tensor RandomIds(const Shape& shape, int32_t vocab_size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, vocab_size - 1);
  Tensor ids = Tensor::Zeros(shape, DType::kI32, Device::kCpu);
  for (int64_t i = 0; i < ids.numel(); ++i) ids.data<int32_t>()[i] = id(rng);
  return ids;
}

Tensor OnGpu(const Tensor& cpu) { return cpu.ToDevice(Device::kCuda); }

void ExpectBitEqual(const std::string& what, const Tensor& gpu, const Tensor& cpu) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what << ": shape";
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what << ": dtype";
  const Tensor got = gpu.ToDevice(Device::kCpu);
  const Tensor want = cpu.ToDevice(Device::kCpu);  // a GPU tensor in run-to-run checks
  const size_t element_bytes = SizeOf(cpu.dtype());
  const char* got_bytes = static_cast<const char*>(got.raw_data());
  const char* want_bytes = static_cast<const char*>(want.raw_data());
  int64_t first = -1, mismatches = 0;
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    if (std::memcmp(got_bytes + i * element_bytes, want_bytes + i * element_bytes,
                    element_bytes) == 0) {
      continue;
    }
    if (first < 0) first = i;
    ++mismatches;
  }
  if (mismatches == 0) return;
  std::ostringstream first_values;
  if (IsFloating(cpu.dtype())) {
    first_values << ": gpu " << got.ToFloatVector()[first] << ", cpu "
                 << want.ToFloatVector()[first];
  }
  ADD_FAILURE() << what << " " << DTypeName(cpu.dtype()) << " " << ShapeString(cpu.shape())
                << ": " << mismatches << " of " << cpu.numel()
                << " elements differ in their bits (expected bit-equal); first at [" << first
                << "]" << first_values.str();
}

void ExpectClose(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                 double f32_tolerance) {
  const DType dtype = cpu.dtype();
  std::ostringstream rule;
  rule << f32_tolerance << " * max(|cpu|, 1)"
       << (dtype == DType::kF16 ? " + 1 f16 ulp" : dtype == DType::kBF16 ? " + 1 bf16 ulp" : "");
  CompareValues(
      what, gpu, cpu,
      [&](float want) {
        return f32_tolerance * std::max(1.0, std::fabs(double{want})) +
               HalfUlp(want, dtype);
      },
      rule.str());
}

void ExpectCloseToLargest(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                          double tolerance, double scale_floor) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  const std::vector<float> g = gpu.ToFloatVector(), c = cpu.ToFloatVector();
  if (c.empty()) return;
  double largest = 0.0, worst = 0.0;
  size_t worst_index = 0;
  bool nan_seen = false;
  for (size_t i = 0; i < c.size(); ++i) {
    largest = std::max(largest, std::fabs(static_cast<double>(c[i])));
    const double error = std::fabs(static_cast<double>(g[i]) - c[i]);
    if (nan_seen) continue;  // keep the first NaN as the reported element
    if (std::isnan(error)) {
      nan_seen = true;
      worst_index = i;
    } else if (error > worst) {
      worst = error;
      worst_index = i;
    }
  }
  const double scale = std::max({largest, scale_floor, 1e-30});
  std::printf("measured %s: %.3g (bound %.3g)\n", what.c_str(), nan_seen ? NAN : worst / scale,
              tolerance);
  EXPECT_FALSE(nan_seen) << what << ": element " << worst_index << " gpu " << g[worst_index]
                         << " cpu " << c[worst_index] << " (NaN)";
  EXPECT_LE(worst, tolerance * scale)
      << what << ": element " << worst_index << " gpu " << g[worst_index] << " cpu "
      << c[worst_index] << " (largest |cpu| " << largest << ", scale floor " << scale_floor << ")";
}

void ExpectMeanCloseToLargest(const std::string& what, const Tensor& gpu, const Tensor& cpu,
                              double tolerance, double scale_floor) {
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  const std::vector<float> g = gpu.ToFloatVector(), c = cpu.ToFloatVector();
  if (c.empty()) return;
  double largest = 0.0, sum = 0.0;
  for (size_t i = 0; i < c.size(); ++i) {
    largest = std::max(largest, std::fabs(static_cast<double>(c[i])));
    sum += std::fabs(static_cast<double>(g[i]) - c[i]);
  }
  const double mean = sum / static_cast<double>(c.size()) / std::max({largest, scale_floor, 1e-30});
  std::printf("measured %s (mean): %.3g (bound %.3g)\n", what.c_str(), mean, tolerance);
  EXPECT_LE(mean, tolerance) << what << ": mean error " << mean << " of the largest |cpu| "
                             << largest;
}

double HalfUlp(double value, DType dtype) {
  const float f = static_cast<float>(value);
  return dtype == DType::kF16 ? HalfUlpAt(f) : dtype == DType::kBF16 ? BFloat16UlpAt(f) : 0.0;
}

double LargestMagnitude(const Tensor& t) {
  double largest = 0.0;
  for (float v : t.ToFloatVector()) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  return largest;
}

}  // namespace xlmr::testing
