// Which copy of a Linear layer's parameters a pass reads, under the pass's precision policy
// (PassContext::autocast, as torch.autocast(float16 | bfloat16) for a Trainer with fp16=True or
// bf16=True). Everything below holds for either half dtype (bf16: golden_bf16.safetensors).
//
// Autocast casts EVERY floating argument of F.linear to fp16, the bias included, so under fp16
// the bias is rounded to fp16 before the GEMM adds it (in fp32, then one rounding of the
// result). Adding the fp32 master bias instead moves every fp16 result across rounding
// boundaries that Hugging Face's do not cross: measured on the tiny golden model, the loss
// 2.275075 against autocast's 2.274496, while the fp16-rounded bias reproduces autocast's loss
// exactly (tests/golden/make_golden_fp16.py, tests/testing/hf_parity.h).
#ifndef XLMR_MODELS_ENCODER_AUTOCAST_H_
#define XLMR_MODELS_ENCODER_AUTOCAST_H_

#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/encoder/pass_context.h"

namespace xlmr::models {

// The weight parameter `index` as the matrix product reads it: the half working copy (f16 or
// bf16, the autocast dtype) under autocast, else the fp32 master (a view, no copy).
Tensor LinearWeight(const ParameterStore& store, int index, const PassContext& context);

// The bias parameter `index` as ops::Linear takes it: the fp32 master, or under autocast the half
// working copy (a view, no copy; ops::Linear adds its exact f32 value, and on CUDA the f16|bf16
// bias is the type cuBLASLt's epilogue takes beside an output of that dtype).
Tensor LinearBias(const ParameterStore& store, int index, const PassContext& context);

// Autocast's cast of an op's input to the dtype the op computes in (e.g. a Linear's input to
// the matmul dtype, a gradient back to fp32): `t` itself when it already has that dtype.
Tensor InDType(const Tensor& t, DType dtype);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_AUTOCAST_H_
