// RoBERTa and CamemBERT against Hugging Face Transformers on the CPU backend: every task head of
// the tiny random models of tests/golden/{roberta,camembert}_heads (make_tiny_family_heads.py:
// {Roberta,Camembert}For{SequenceClassification,TokenClassification,QuestionAnswering} and the
// regression head, each saved by transformers), fp32 and fp16 autocast, eager and fused
// attention, padded and packed, through tests/testing/hf_parity.h's checks and XLM-R's
// tolerances (stated there). Their network is XLM-R's (HF's CamembertModel and XLMRobertaModel
// are RobertaModel); these check it under each family's own directory, names and ids.
// BERT's twin: tests/models/bert_parity_test.cc.
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/hf_parity.h"

namespace xlmr {
namespace {

using models::AttentionImplementation;
using testing::Precision;

constexpr const char* kFamilies[] = {"tests/golden/roberta_heads/", "tests/golden/camembert_heads/"};
constexpr const char* kHeads[] = {"sequence_classification", "regression", "token_classification",
                                  "question_answering"};

TEST(FamilyParityTest, EveryHeadMatchesFp32) {
  for (const char* family : kFamilies) {
    for (const char* head : kHeads) {
      SCOPED_TRACE(std::string(family) + head);
      for (AttentionImplementation attention : {AttentionImplementation::kEager, AttentionImplementation::kFused}) {
        testing::ExpectFamilyParity(Device::kCpu, std::string(family) + head, Precision::kFp32, attention);
      }
    }
  }
}

TEST(FamilyParityTest, EveryHeadMatchesFp16Autocast) {
  for (const char* family : kFamilies) {
    for (const char* head : kHeads) {
      SCOPED_TRACE(std::string(family) + head);
      for (AttentionImplementation attention : {AttentionImplementation::kEager, AttentionImplementation::kFused}) {
        testing::ExpectFamilyParity(Device::kCpu, std::string(family) + head, Precision::kFp16Autocast, attention);
      }
    }
  }
}

// --padding_free (question answering's windows stay padded).
TEST(FamilyParityTest, PackedHeadsMatchFp32) {
  for (const char* family : kFamilies) {
    for (const char* head : {"sequence_classification", "regression", "token_classification"}) {
      SCOPED_TRACE(std::string(family) + head);
      testing::ExpectFamilyParity(Device::kCpu, std::string(family) + head, Precision::kFp32,
                                  AttentionImplementation::kFused, /*packed=*/true);
    }
  }
}

}  // namespace
}  // namespace xlmr
