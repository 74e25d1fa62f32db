// How far summation order alone moves a training step: the CPU-side measurement behind the
// GPU-vs-CPU tolerances of tests/gpu/train_step_test.cc (which cannot be measured without a
// GPU). The CUDA backend computes the same arithmetic as the CPU backend in other orders
// (cuBLASLt vs OpenBLAS GEMMs, tree vs serial reductions). Here the order is changed on the
// CPU in two ways that leave the mathematical result unchanged:
//  - batch order: the examples inside each micro-batch reversed, which reorders every reduction
//    over examples (weight-gradient GEMMs over batch x sequence rows, bias sums, the loss sum);
//  - hidden order: the feed-forward's intermediate units reversed in every block (rows of
//    intermediate.dense, columns of output.dense: the same function), which reorders the
//    K-sum of the output.dense GEMM forward and of the intermediate's input gradient, the kind
//    of difference that can move an fp32 sum across a rounding boundary of its fp16 copy.
// Set-up as train_step_test's (tiny XLM-R, 12 examples in two micro-batches of 6, three steps,
// clipping at 1, linear warm-up 1, AdamW eps 1; and its head_dim-64 variant, Head64ModelOptions,
// in fp32, fp16 and bf16) but with dropout off: a mask element is keyed by its position, so
// reordering would change the masks.
//
// The test prints the measured figures (quoted in tests/gpu/train_step_test.cc) and fails when
// either reordering reaches a third of the GPU tolerance: the GPU bounds must keep a margin of
// at least 3 over what a change of order alone does on the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "framework/data/collate.h"
#include "gtest/gtest.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::testing {
namespace {

struct Run {
  std::vector<double> losses;
  std::vector<float> first_grads;
  std::vector<float> weights;
};

// Reverses the intermediate units of every block in `flat` (weights, or gradients), laid out
// as `store`: an involution, and a symmetry of the model.
void ReverseIntermediateUnits(std::vector<float>& flat, const ParameterStore& store, int layers) {
  for (int l = 0; l < layers; ++l) {
    const std::string prefix = "roberta.encoder.layer." + std::to_string(l) + ".";
    const int w1 = store.Find(prefix + "intermediate.dense.weight");
    const int b1 = store.Find(prefix + "intermediate.dense.bias");
    const int w2 = store.Find(prefix + "output.dense.weight");
    ASSERT_TRUE(w1 >= 0 && b1 >= 0 && w2 >= 0);
    const int64_t units = store.spec(b1).shape[0], hidden = store.spec(w1).shape[1];
    float* rows = flat.data() + store.range(w1).offset;  // [units, hidden]
    for (int64_t i = 0; i < units / 2; ++i) {
      std::swap_ranges(rows + i * hidden, rows + (i + 1) * hidden, rows + (units - 1 - i) * hidden);
    }
    std::reverse(flat.begin() + store.range(b1).offset, flat.begin() + store.range(b1).offset + units);
    float* columns = flat.data() + store.range(w2).offset;  // [hidden, units]
    for (int64_t r = 0; r < hidden; ++r) std::reverse(columns + r * units, columns + (r + 1) * units);
  }
}

enum class Order { kAsIs, kBatchReversed, kHiddenReversed };

// One configuration of train_step_test.cc: the model and data, and the autocast dtype.
struct Setup {
  std::string name;
  TinyModelOptions model;
  TinyDataOptions data;
  DType autocast = DType::kF32;
};

Setup Tiny(DType autocast) { return {"tiny", {}, {}, autocast}; }
// bf16 runs eager attention, as train_step_test's bf16 steps do on both backends (CUDA has no
// fused bf16 kernel).
Setup Head64(DType autocast) {
  Setup setup{"head_dim 64", Head64ModelOptions(), Head64DataOptions(), autocast};
  if (autocast == DType::kBF16) setup.model.attention = models::AttentionImplementation::kEager;
  return setup;
}

Run Train(const Setup& setup, Order order) {
  TinyTrainerOptions options;
  options.model = setup.model;
  options.autocast = setup.autocast;
  options.lr_schedule = "linear";
  options.warmup_steps = 1;
  options.total_steps = 10;
  options.adam.eps = 1.0;
  const data::TokenizedDataset dataset = TinyDataset(12, setup.data);
  std::vector<data::Batch> batches;
  for (int m = 0; m < 2; ++m) {
    std::vector<int64_t> indices(6);
    std::iota(indices.begin(), indices.end(), 6 * m);
    if (order == Order::kBatchReversed) std::reverse(indices.begin(), indices.end());
    batches.push_back(data::Collate(dataset, indices, /*pad_id=*/1));
  }
  TinyTrainer trainer(options);
  ParameterStore& store = trainer.model().parameters();
  const bool hidden_reversed = order == Order::kHiddenReversed;
  if (hidden_reversed) {
    std::vector<float> weights = store.master().ToFloatVector();
    ReverseIntermediateUnits(weights, store, options.model.layers);
    store.master().CopyFromFloats(weights);
    if (setup.autocast != DType::kF32) store.RefreshHalfCopy();
  }
  Run run;
  for (int step = 0; step < 3; ++step) {
    const train::StepOutcome outcome = trainer.Step(step, batches);
    EXPECT_FALSE(outcome.skipped);
    run.losses.push_back(outcome.loss);
    if (step == 0) run.first_grads = trainer.gradients();
  }
  run.weights = store.master().ToFloatVector();
  if (hidden_reversed) {  // back to the original layout for the comparison
    ReverseIntermediateUnits(run.first_grads, store, options.model.layers);
    ReverseIntermediateUnits(run.weights, store, options.model.layers);
  }
  return run;
}

struct Sensitivity {
  double loss_relative = 0, grad_of_largest = 0, weight_absolute = 0;
};

Sensitivity Measure(const Setup& setup, Order order) {
  const Run a = Train(setup, Order::kAsIs), b = Train(setup, order);
  Sensitivity s;
  for (size_t i = 0; i < a.losses.size(); ++i) {
    s.loss_relative = std::max(s.loss_relative, std::fabs(a.losses[i] - b.losses[i]) / std::fabs(a.losses[i]));
  }
  double largest = 0, worst = 0;
  for (size_t i = 0; i < a.first_grads.size(); ++i) {
    largest = std::max(largest, std::fabs(double{a.first_grads[i]}));
    worst = std::max(worst, std::fabs(double{a.first_grads[i]} - b.first_grads[i]));
  }
  s.grad_of_largest = worst / largest;
  for (size_t i = 0; i < a.weights.size(); ++i) {
    s.weight_absolute = std::max(s.weight_absolute, std::fabs(double{a.weights[i]} - b.weights[i]));
  }
  std::printf("%s, %s, %s reversed: the loss moves by %.3g relative, the step-1 gradients by %.3g "
              "of the largest, the weights after 3 steps by %.3g absolute\n",
              setup.name.c_str(), DTypeName(setup.autocast),
              order == Order::kBatchReversed ? "batch" : "hidden", s.loss_relative,
              s.grad_of_largest, s.weight_absolute);
  return s;
}

// The tolerances of tests/gpu/train_step_test.cc (kF32, kF16, kBF16): each reordering must
// stay within a third of them, and at least one must change something (else this measures
// nothing; under fp16 the hidden reordering is usually absorbed whole by the fp16 rounding of
// the outputs).
void ExpectWithinAThird(const Setup& setup, double loss, double grad, double weight) {
  double largest_change = 0;
  for (Order order : {Order::kBatchReversed, Order::kHiddenReversed}) {
    const Sensitivity s = Measure(setup, order);
    largest_change = std::max(largest_change, s.grad_of_largest);
    EXPECT_LE(s.loss_relative, loss / 3);
    EXPECT_LE(s.grad_of_largest, grad / 3);
    EXPECT_LE(s.weight_absolute, weight / 3);
  }
  EXPECT_GT(largest_change, 0.0) << "no reordering changed anything: the test lost its point";
}

TEST(SummationOrderTest, Fp32OrderSensitivityIsAThirdOfTheGpuToleranceOrLess) {
  ExpectWithinAThird(Tiny(DType::kF32), 1e-5, 2.5e-5, 1e-6);
}

TEST(SummationOrderTest, Fp16OrderSensitivityIsAThirdOfTheGpuToleranceOrLess) {
  ExpectWithinAThird(Tiny(DType::kF16), 2e-3, 1e-2, 1e-4);
}

TEST(SummationOrderTest, Head64OrderSensitivityIsAThirdOfTheGpuToleranceOrLess) {
  ExpectWithinAThird(Head64(DType::kF32), 1e-5, 2.5e-5, 1e-6);
  ExpectWithinAThird(Head64(DType::kF16), 2e-3, 1e-2, 1e-4);
  ExpectWithinAThird(Head64(DType::kBF16), 1.6e-2, 8e-2, 8e-4);
}

}  // namespace
}  // namespace xlmr::testing
