// optimizer_bench: the optimizer step's passes over the flat buffers, before and after they
// were fused into two (issue 38, item 4), on one device.
//
// "in place" is the sequence the step ran before: unscale + finite check (ops::
// UnscaleAndCheckFinite), the norm (ops::SumOfSquares), clipping (ops::ScaleInPlace by the
// coefficient), AdamW (ops::AdamWStep with the fp16 working copy) and the next step's zeroing
// (ParameterStore::ZeroGrads's pass: ops-level fill). "two passes" is what the step runs now:
// ops::FlagNonFiniteAndSumSquares, then ops::AdamWStepWithState on the raw gradients (unscaled
// and clipped as read, zeroed after). Both start from the same buffers each repetition; the
// two take turns, so a change of load affects them alike. Prints the median milliseconds.
//
//   bazel build -c opt //bench:optimizer_bench
//   bazel-bin/bench/optimizer_bench --elements=278045955 --repeats=5   (XLM-R base's parameters)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "framework/ops/optim.h"
#include "framework/ops/step_decisions.h"
#include "framework/optim/adamw.h"
#include "framework/tensor/storage.h"

ABSL_FLAG(int64_t, elements, 278045955, "parameters (XLM-R base: 278,045,955)");
ABSL_FLAG(int, repeats, 5, "timed repetitions of each form (median printed)");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda");

namespace xlmr {
namespace {

struct Buffers {
  Tensor param, grad, m, v, half;
  Buffers(int64_t n, Device device)
      : param(Tensor::Zeros({n}, DType::kF32, device)),
        grad(Tensor::Zeros({n}, DType::kF32, device)),
        m(Tensor::Zeros({n}, DType::kF32, device)),
        v(Tensor::Zeros({n}, DType::kF32, device)),
        half(Tensor::Zeros({n}, DType::kF16, device)) {}
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void Sync(Device device) {
  if (device != Device::kCpu) (void)ops::SumOfSquares(Tensor::Zeros({1}, DType::kF32, device));  // waits
}

int Run() {
  const int64_t n = absl::GetFlag(FLAGS_elements);
  const Device device = absl::GetFlag(FLAGS_device) == "cuda" ? Device::kCuda : Device::kCpu;
  const std::vector<ops::AdamWDecayRun> runs = {{0, n, true}};
  optim::AdamWOptions options;
  options.weight_decay = 0.01;
  const ops::AdamWStepScalars scalars = optim::ComputeAdamWStepScalars(options, 1e-5, 1);
  ops::AdamWCandidates candidates;
  candidates.first_count = 1;
  candidates.count = 1;
  candidates.scalars[0] = scalars;
  const float scale = 65536.0f;
  const double max_norm = 1.0;
  Buffers b(n, device);
  const std::vector<float> raw(static_cast<size_t>(n), 3e-4f * scale);  // loss-scaled gradients
  b.param.CopyFromFloats(std::vector<float>(static_cast<size_t>(n), 0.01f));
  Tensor state = ops::MakeStepState(device);
  std::vector<double> in_place_ms, two_pass_ms;
  for (int r = 0; r < absl::GetFlag(FLAGS_repeats) + 1; ++r) {  // the first of each is a warm-up
    b.grad.CopyFromFloats(raw);
    Sync(device);
    auto begin = std::chrono::steady_clock::now();
    ops::UnscaleAndCheckFinite(b.grad, 1.0f / scale);
    const double norm = std::sqrt(ops::SumOfSquares(b.grad));
    const float clip = static_cast<float>(max_norm / (norm + 1e-6));
    if (clip < 1.0f) ops::ScaleInPlace(b.grad, clip);
    ops::AdamWStep(scalars, runs, b.param, b.grad, b.m, b.v, &b.half);
    AllocatorFor(device).Zero(b.grad.raw_data(), b.grad.bytes());  // the next step's zeroing (ZeroGrads)
    Sync(device);
    if (r > 0) in_place_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());

    b.grad.CopyFromFloats(raw);
    std::vector<double> row(kernels::kStepSlots, 0.0);
    row[kernels::kSlotScale] = scale;
    ops::WriteStepRow(state, 0, row);
    kernels::StepInputs inputs;
    inputs.candidates = candidates;
    inputs.loss_terms = 1;
    ops::WriteStepInputs(state, 1, inputs);
    ops::BeginStepState(state, 1, 0);
    Sync(device);
    begin = std::chrono::steady_clock::now();
    ops::FlagNonFiniteAndSumSquares(b.grad, state, 1, /*unscale=*/true);
    ops::AdamWStepWithState(runs, b.param, b.grad, b.m, b.v, &b.half, state, 1, {true, max_norm});
    Sync(device);
    if (r > 0) two_pass_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());
  }
  std::printf("| elements | device | in place (5 passes + zeroing) ms | two passes ms | speed-up |\n|---:|---|---:|---:|---:|\n");
  std::printf("| %lld | %s | %.1f | %.1f | %.2fx |\n", static_cast<long long>(n), DeviceName(device), Median(in_place_ms),
              Median(two_pass_ms), Median(in_place_ms) / Median(two_pass_ms));
  return 0;
}

}  // namespace
}  // namespace xlmr

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return xlmr::Run();
}
