#include "tests/framework/train/qa_golden_cases.h"

#include <fstream>
#include <string>

#include "framework/data/qa_features.h"
#include "gtest/gtest.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"

namespace xlmr::train::testing {

using nlohmann::json;

namespace {
const char kModel[] = "recipes/data/langid/sentencepiece.bpe.model";
const char kGolden[] = "tests/framework/train/testdata/qa_postprocessing.json";
}  // namespace

QaGolden LoadQaGolden() {
  QaGolden out;
  std::ifstream file(kGolden);
  EXPECT_TRUE(file.good()) << kGolden;
  if (!file.good()) return out;
  const json golden = json::parse(file);
  auto examples = data::ReadQaExamples(golden.at("examples").get<std::string>());
  EXPECT_TRUE(examples.ok()) << examples.status();
  if (!examples.ok()) return out;
  out.examples = std::move(examples).value();
  const models::SentencePieceTokenizer tokenizer = models::SentencePieceTokenizer::Load(kModel, 1 << 20).value();
  data::QaFeatureOptions feature_options;
  feature_options.max_seq_length = golden.at("max_seq_length").get<int>();
  feature_options.doc_stride = golden.at("doc_stride").get<int>();
  const auto features = data::PrepareQaFeatures(
      out.examples,
      [&tokenizer](const std::string& text, std::vector<data::TextSpan>* spans) {
        std::vector<models::TokenSpan> token_spans;
        std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &token_spans);
        spans->clear();
        for (const auto& span : token_spans) spans->push_back({span.begin, span.end});
        return ids;
      },
      feature_options);
  EXPECT_TRUE(features.ok()) << features.status();
  if (!features.ok()) return out;
  const auto start_logits = golden.at("start_logits").get<std::vector<std::vector<float>>>();
  const auto end_logits = golden.at("end_logits").get<std::vector<std::vector<float>>>();
  EXPECT_EQ(start_logits.size(), features->size());
  if (start_logits.size() != features->size()) return out;
  for (const json& c : golden.at("cases")) {
    QaGoldenCase one;
    one.golden = c;
    one.options.version_2_with_negative = c.at("version_2_with_negative").get<bool>();
    one.options.n_best_size = c.at("n_best_size").get<int>();
    one.options.max_answer_length = c.at("max_answer_length").get<int>();
    one.options.null_score_diff_threshold = c.at("null_score_diff_threshold").get<float>();
    // The generator raised every window's <s> logits by null_boost (float32) before calling HF.
    const float boost = c.at("null_boost").get<float>();
    std::vector<std::vector<float>> starts = start_logits, ends = end_logits;
    for (size_t f = 0; f < starts.size(); ++f) {
      starts[f][0] += boost;
      ends[f][0] += boost;
    }
    one.predictions = PostprocessQaPredictions(out.examples, *features, starts, ends, one.options);
    out.cases.push_back(std::move(one));
  }
  return out;
}

}  // namespace xlmr::train::testing
