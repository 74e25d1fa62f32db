#include "models/encoder/question_answering_head.h"

#include "framework/core/check.h"
#include "framework/ops/elementwise.h"
#include "framework/ops/linear.h"
#include "models/encoder/autocast.h"

namespace xlmr::models {
namespace {

// Row `row` (0 start, 1 end) of qa_outputs' weight [2, H] and bias [2].
Tensor WeightRow(const Tensor& weight, int row) {
  const int64_t h = weight.dim(1);
  return weight.View(row * h, {1, h});
}
Tensor BiasRow(const Tensor& bias, int row) { return bias.View(row, {1}); }

}  // namespace

Tensor QuestionAnsweringHead::Forward(const Tensor& sequence, const TokenLayout& tokens,
                                      const ParameterStore& store, const PassContext& context) {
  XLMR_CHECK(sequence.rank() == 3 && !tokens.packed()) << "encoder output [B,S,H], padded";
  const DType mm = context.matmul_dtype();
  const int64_t batch = sequence.dim(0), length = sequence.dim(1);
  sequence_mm_ = InDType(sequence, mm);
  const Tensor weight = LinearWeight(store, params_.weight, context);
  const Tensor bias = LinearBias(store, params_.bias, context);
  Tensor logits = Tensor::Empty({2, batch, length}, mm, sequence.device(),
                                MemoryCategory::kActivations);
  for (int row = 0; row < 2; ++row) {
    const Tensor half = ops::Linear(sequence_mm_, WeightRow(weight, row), BiasRow(bias, row), mm);
    Tensor target = logits.Slice(row, row + 1).Reshaped({batch, length, 1});
    ops::CastInto(half, &target);
  }
  return logits;
}

Tensor QuestionAnsweringHead::Backward(const Tensor& d_logits, const TokenLayout& /*tokens*/,
                                       ParameterStore& store, const PassContext& context) {
  XLMR_CHECK(d_logits.rank() == 3 && d_logits.dim(0) == 2) << "d_logits [2,B,S]";
  const DType mm = context.matmul_dtype();
  const int64_t batch = d_logits.dim(1), length = d_logits.dim(2);
  const Tensor weight = LinearWeight(store, params_.weight, context);
  Tensor dw = store.grad(params_.weight);
  Tensor db = store.grad(params_.bias);
  Tensor d_sequence;
  for (int row = 0; row < 2; ++row) {
    Tensor dw_row = WeightRow(dw, row);
    Tensor db_row = BiasRow(db, row);
    const Tensor dy = InDType(d_logits.Slice(row, row + 1).Reshaped({batch, length, 1}), mm);
    const Tensor dx = ops::LinearBackward(dy, sequence_mm_, WeightRow(weight, row), &dw_row,
                                          &db_row, DType::kF32);
    d_sequence = row == 0 ? dx : ops::Add(d_sequence, dx, DType::kF32);
  }
  Clear();
  // HF's one GEMM over both rows sums the two (exact fp32) products in fp32 and rounds the sum
  // once to the matmul dtype; the sum above is that fp32 sum, so rounding it here matches.
  return InDType(InDType(d_sequence, mm), DType::kF32);
}

}  // namespace xlmr::models
