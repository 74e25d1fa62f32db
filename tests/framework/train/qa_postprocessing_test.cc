// PostprocessQaPredictions against Hugging Face's utils_qa.postprocess_qa_predictions run on the
// same logits (testdata/qa_postprocessing.json, made by
// testdata/make_qa_postprocessing_testdata.py).
#include "framework/train/qa_postprocessing.h"

#include <fstream>
#include <string>
#include <vector>

#include "framework/data/qa_example_reader.h"
#include "framework/data/qa_features.h"
#include "gtest/gtest.h"
#include "models/xlmr/tokenizer.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

using nlohmann::json;

const char kModel[] = "recipes/data/langid/sentencepiece.bpe.model";
const char kGolden[] = "tests/framework/train/testdata/qa_postprocessing.json";

TEST(QaPostprocessingTest, EqualsHuggingFaceUtilsQaOnRandomLogits) {
  std::ifstream file(kGolden);
  ASSERT_TRUE(file.good()) << kGolden;
  const json golden = json::parse(file);
  const auto examples = data::ReadQaExamples(golden.at("examples").get<std::string>());
  ASSERT_TRUE(examples.ok()) << examples.status();
  const models::XlmrTokenizer tokenizer = models::XlmrTokenizer::Load(kModel, 1 << 20).value();
  data::QaFeatureOptions feature_options;
  feature_options.max_seq_length = golden.at("max_seq_length").get<int>();
  feature_options.doc_stride = golden.at("doc_stride").get<int>();
  const auto features = data::PrepareQaFeatures(
      *examples,
      [&tokenizer](const std::string& text, std::vector<data::TextSpan>* spans) {
        std::vector<models::TokenSpan> token_spans;
        std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &token_spans);
        spans->clear();
        for (const auto& span : token_spans) spans->push_back({span.begin, span.end});
        return ids;
      },
      feature_options);
  ASSERT_TRUE(features.ok()) << features.status();
  const auto start_logits = golden.at("start_logits").get<std::vector<std::vector<float>>>();
  const auto end_logits = golden.at("end_logits").get<std::vector<std::vector<float>>>();
  ASSERT_EQ(start_logits.size(), features->size());
  int null_answers = 0;
  for (const json& c : golden.at("cases")) {
    QaPostprocessOptions options;
    options.version_2_with_negative = c.at("version_2_with_negative").get<bool>();
    options.n_best_size = c.at("n_best_size").get<int>();
    options.max_answer_length = c.at("max_answer_length").get<int>();
    options.null_score_diff_threshold = c.at("null_score_diff_threshold").get<float>();
    const float boost = c.at("null_boost").get<float>();
    std::vector<std::vector<float>> starts = start_logits, ends = end_logits;
    for (size_t f = 0; f < starts.size(); ++f) {
      starts[f][0] += boost;
      ends[f][0] += boost;
    }
    const std::vector<QaPrediction> predictions =
        PostprocessQaPredictions(*examples, *features, starts, ends, options);
    ASSERT_EQ(predictions.size(), examples->size());
    for (const QaPrediction& p : predictions) {
      const std::string where = c.dump().substr(0, 120) + " id " + p.id;
      // Texts, logits and null odds are the same float32 operations in the same order: exact.
      EXPECT_EQ(p.answer, c.at("predictions").at(p.id).get<std::string>()) << where;
      null_answers += p.answer.empty();
      const json& nbest = c.at("nbest").at(p.id);
      ASSERT_EQ(p.nbest.size(), nbest.size()) << where;
      for (size_t i = 0; i < p.nbest.size(); ++i) {
        EXPECT_EQ(p.nbest[i].text, nbest[i].at("text").get<std::string>()) << where << " #" << i;
        EXPECT_EQ(p.nbest[i].start_logit, nbest[i].at("start_logit").get<float>()) << where;
        EXPECT_EQ(p.nbest[i].end_logit, nbest[i].at("end_logit").get<float>()) << where;
        // numpy's float32 exp (its own SIMD code) and pairwise sum round differently from
        // std::exp and a running sum: a few float32 ulps of a probability <= 1.
        EXPECT_NEAR(p.nbest[i].probability, nbest[i].at("probability").get<double>(), 1e-6)
            << where << " #" << i;
      }
      if (options.version_2_with_negative) {
        ASSERT_TRUE(p.null_odds.has_value());
        EXPECT_EQ(*p.null_odds, c.at("null_odds").at(p.id).get<float>()) << where;
      } else {
        EXPECT_FALSE(p.null_odds.has_value());
      }
    }
  }
  EXPECT_GE(null_answers, 2);  // the golden cases must include null answers
}

}  // namespace
}  // namespace xlmr::train
