// Parity with Hugging Face Transformers on the CUDA backend: the same golden model, inputs,
// checks and tolerances as the CPU backend's parity test (tests/testing/hf_parity.h). The GPU
// computes in fp32 with fp32 accumulation (no TF32), so it answers to the fp32 tolerances; under
// fp16 or bf16 it answers to Hugging Face's autocast results with those tolerances.
#include "framework/core/device.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/hf_parity.h"

namespace xlmr::testing {
namespace {

class HuggingFaceParityGpuTest : public GpuTest {};

TEST_F(HuggingFaceParityGpuTest, LogitsLossAndEveryGradientMatchFp32) {
  ExpectHuggingFaceParity(Device::kCuda);
}

TEST_F(HuggingFaceParityGpuTest, LogitsLossAndEveryGradientMatchFp16Autocast) {
  ExpectHuggingFaceParity(Device::kCuda, Precision::kFp16Autocast);
}

// The tiny model's heads (16 wide) have no CUDA fused kernel: eager attention, golden_bf16.
TEST_F(HuggingFaceParityGpuTest, LogitsLossAndEveryGradientMatchBf16Autocast) {
  ExpectHuggingFaceParity(Device::kCuda, Precision::kBf16Autocast);
}

// Heads 64 wide: the CUDA fused attention kernels (f32, f16, bf16) inside the whole model,
// forward and backward with the saved logsumexp, against HF's sdpa (fp32: eager) results.
TEST_F(HuggingFaceParityGpuTest, Head64FusedAttentionMatchesFp32) {
  ExpectHuggingFaceParity(Device::kCuda, Precision::kFp32, models::AttentionImplementation::kFused,
                          kHead64GoldenDir);
}

TEST_F(HuggingFaceParityGpuTest, Head64FusedAttentionMatchesSdpaUnderFp16Autocast) {
  ExpectHuggingFaceParity(Device::kCuda, Precision::kFp16Autocast,
                          models::AttentionImplementation::kFused, kHead64GoldenDir);
}

TEST_F(HuggingFaceParityGpuTest, Head64MatchesBf16Autocast) {
  ExpectHuggingFaceParity(Device::kCuda, Precision::kBf16Autocast,
                          models::AttentionImplementation::kFused, kHead64GoldenDir);
}

// The other families' heads (tests/golden/tiny_bert, roberta_heads, camembert_heads): BERT's
// token types, positions from 0 and pooler, and every head of each family, on the GPU. Their
// heads are 8 and 4 wide, which CUDA's fused attention (64) does not take: the model runs eager
// attention, and fp16 answers to HF's eager fp16 results (ExpectFamilyParity picks the file).
constexpr const char* kFamilyHeadDirs[] = {
    "tests/golden/tiny_bert/sequence_classification",       "tests/golden/tiny_bert/regression",
    "tests/golden/tiny_bert/token_classification",          "tests/golden/tiny_bert/question_answering",
    "tests/golden/roberta_heads/sequence_classification",   "tests/golden/roberta_heads/regression",
    "tests/golden/roberta_heads/token_classification",      "tests/golden/roberta_heads/question_answering",
    "tests/golden/camembert_heads/sequence_classification", "tests/golden/camembert_heads/regression",
    "tests/golden/camembert_heads/token_classification",    "tests/golden/camembert_heads/question_answering",
};

TEST_F(HuggingFaceParityGpuTest, OtherFamiliesEveryHeadMatchesFp32AndFp16Autocast) {
  for (const char* dir : kFamilyHeadDirs) {
    SCOPED_TRACE(dir);
    for (Precision precision : {Precision::kFp32, Precision::kFp16Autocast}) {
      ExpectFamilyParity(Device::kCuda, dir, precision, models::AttentionImplementation::kFused);
    }
  }
}

}  // namespace
}  // namespace xlmr::testing
