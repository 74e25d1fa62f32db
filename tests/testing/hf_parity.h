// Parity with Hugging Face Transformers on one backend: the tiny random
// XLMRobertaForSequenceClassification of tests/golden (made by tests/golden/make_golden.py with
// transformers itself: vocabulary 101, hidden 24, 2 layers, 3 heads, two padded rows) loaded on
// `device`, one forward and backward on the golden inputs (fp32, dropout off), compared with
// HF's logits, loss and every parameter gradient. Shared by the CPU parity test
// (tests/models/encoder, tests/models) and the GPU one (tests/gpu), so both backends answer to the same checks.
//
// Tolerances: logits and loss 1e-5, gradients 1e-4, relative to the largest magnitude of the
// reference tensor. Both sides compute in fp32 but sum in different orders (OpenBLAS or
// cuBLASLt vs PyTorch's kernels), so bitwise equality is not expected; 1e-5 is ~100 fp32 ulps
// of the output scale, and gradients pass through twice as many reductions. The key
// projection's bias has an analytically zero gradient (softmax is invariant to adding q.b_k to
// every score of a row), so both sides hold rounding noise near 1e-7: ours must be that small
// (<= 1e-6 of the largest gradient in the model) instead of being compared noise with noise.
// The padding rows of the word and position embeddings must get exactly zero gradient (HF's
// padding_idx).
#ifndef XLMR_TESTS_TESTING_HF_PARITY_H_
#define XLMR_TESTS_TESTING_HF_PARITY_H_

#include <string>

#include "framework/core/device.h"
#include "models/encoder/config.h"

namespace xlmr::testing {

// The golden directory, relative to the test's runfiles root (data dep //tests/golden:tiny_xlmr).
inline constexpr char kTinyXlmrGoldenDir[] = "tests/golden/tiny_xlmr";
// The same files for a model with heads 64 wide (hidden 128, 2 heads, 2 layers; 3 rows of 70
// tokens: two key tiles, lengths 70, 40, 5; make_golden.py --shape=head64, data dep
// //tests/golden:xlmr_head64): the head size of XLM-R base and of the CUDA fused attention
// kernels, so that fused attention runs inside the model on every backend and precision.
inline constexpr char kHead64GoldenDir[] = "tests/golden/xlmr_head64";

enum class Precision { kFp32, kFp16Autocast, kBf16Autocast };

// Runs the comparison above on `device` (kCuda needs CudaContext::Init first); failures are
// gtest failures naming the tensor. Prints one summary line with the measured errors.
// kFp16Autocast compares with golden_fp16.safetensors (make_golden_fp16.py: HF under
// torch.autocast float16) and runs ours with --fp16's precision policy. Measured on the CPU:
// logits bit-equal to HF's, loss within 5e-8, worst gradient 4.1e-4 of its largest element (HF
// rounds weight gradients to fp16, ours stay fp32); tolerances 2e-3 (logits, loss, gradients,
// room for a GPU's summation order to move a few fp16 roundings) and 1e-4 (the zero gradient).
// kBf16Autocast: the same under torch.autocast bfloat16 (golden_bf16{,_sdpa}.safetensors) and
// --bf16's policy; bounds and measurements in hf_parity.cc (kBf16Tolerances).
// `attention`: kEager compares with HF's eager attention; kFused, our fused attention, with the
// same fp32 golden (eager and sdpa agree to fp32 rounding) and under fp16 with
// golden_fp16_sdpa.safetensors (HF's sdpa under autocast, which also keeps the scores in fp32)
// when the device has a fused kernel for the golden model's head size (the CPU), else eager's file.
// `golden_dir`: kTinyXlmrGoldenDir or kHead64GoldenDir (the same files and tolerances).
// `packed`: ours runs the golden batch packed (--padding_free: the real tokens back to back,
// cu_seqlens; fused attention only) against the same golden results (per-token ones at the
// real tokens), within the same tolerances; not bit-equal (other GEMM shapes).
void ExpectHuggingFaceParity(Device device, Precision precision = Precision::kFp32,
                             models::AttentionImplementation attention = models::AttentionImplementation::kFused,
                             const char* golden_dir = kTinyXlmrGoldenDir, bool packed = false);

// The same comparison, fp32, for the other heads: XLMRobertaForTokenClassification
// (token_classifier/, golden_token.safetensors: per-token labels with -100, loss the mean over
// labelled tokens) or the regression head (regressor/, golden_regression.safetensors: MSE),
// both made by make_golden_heads.py on the sequence classifier's backbone, or the
// question-answering head (qa/, golden_qa.safetensors: start and end positions, logits [2,B,S],
// HF's mean of the two cross-entropies; make_golden_qa.py). The fp32 tolerances
// above apply: the head adds one GEMM and the loss's reduction to the same sums.
// How ExpectHeadParity runs the golden batch: fp32 padded, fp32 packed (--padding_free: the real
// tokens back to back; not for question answering, whose windows are padded), or under fp16
// autocast (question answering only: tiny_xlmr/golden_qa_fp16_sdpa.safetensors, made by
// make_golden_qa.py under torch.autocast float16 with sdpa attention; the fused-attention fp16
// tolerances above apply, logits bit-equal on the CPU).
enum class HeadParityMode { kFp32, kFp32Packed, kFp16Autocast };
void ExpectHeadParity(Device device, models::Task task, HeadParityMode mode = HeadParityMode::kFp32);

// Another family's golden set: `head_dir` (relative to the runfiles root) holds a model saved by
// transformers for one task head (e.g. tests/golden/tiny_bert/token_classification, made by
// make_tiny_bert.py) and its results, inputs included (input_ids, attention_mask,
// token_type_ids, labels): golden_fp32.safetensors (eager attention), golden_fp16.safetensors
// (autocast float16, eager) and golden_fp16_sdpa.safetensors (autocast float16, sdpa: the
// reference of our fused attention). The same comparison and XLM-R's tolerances: fp32 and fp16
// eager the tiny set's, fp16 fused the head-64 set's (hf_parity.cc says why). The golden
// token_type_ids must equal what the batcher derives from the ids (data::Collate's segment rule
// with the tokenizer's separator, when the family has one), and are what the model reads.
// `packed` runs the batch packed (fused attention; not for question answering).
void ExpectFamilyParity(Device device, const std::string& head_dir, Precision precision,
                        models::AttentionImplementation attention, bool packed = false);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_TESTING_HF_PARITY_H_
