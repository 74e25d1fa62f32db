// BERT against Hugging Face Transformers on the CPU backend: every task head of the tiny random
// BERT of tests/golden/tiny_bert (make_tiny_bert.py: BertFor{SequenceClassification,
// TokenClassification,QuestionAnswering} and the regression head, text pairs with token types),
// fp32 and fp16 autocast, eager and fused attention, padded and packed, through
// tests/testing/hf_parity.h's checks and XLM-R's tolerances (stated there). The model is loaded
// from the directory transformers saved, so the `bert.` names, the pooler and the token type
// table are read as a user's would be.
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/hf_parity.h"

namespace xlmr {
namespace {

using models::AttentionImplementation;
using testing::Precision;

constexpr char kTinyBert[] = "tests/golden/tiny_bert/";
constexpr const char* kHeads[] = {"sequence_classification", "regression", "token_classification",
                                  "question_answering"};

std::string HeadDir(const char* head) { return std::string(kTinyBert) + head; }

TEST(BertParityTest, EveryHeadMatchesFp32) {
  for (const char* head : kHeads) {
    SCOPED_TRACE(head);
    testing::ExpectFamilyParity(Device::kCpu, HeadDir(head), Precision::kFp32, AttentionImplementation::kEager);
    testing::ExpectFamilyParity(Device::kCpu, HeadDir(head), Precision::kFp32, AttentionImplementation::kFused);
  }
}

TEST(BertParityTest, EveryHeadMatchesFp16Autocast) {
  for (const char* head : kHeads) {
    SCOPED_TRACE(head);
    testing::ExpectFamilyParity(Device::kCpu, HeadDir(head), Precision::kFp16Autocast,
                                AttentionImplementation::kEager);
    testing::ExpectFamilyParity(Device::kCpu, HeadDir(head), Precision::kFp16Autocast,
                                AttentionImplementation::kFused);
  }
}

// --padding_free: the same rows packed, token types gathered with them (question answering's
// windows stay padded).
TEST(BertParityTest, PackedHeadsMatchFp32) {
  for (const char* head : {"sequence_classification", "regression", "token_classification"}) {
    SCOPED_TRACE(head);
    testing::ExpectFamilyParity(Device::kCpu, HeadDir(head), Precision::kFp32, AttentionImplementation::kFused,
                                /*packed=*/true);
  }
}

}  // namespace
}  // namespace xlmr
