// PostprocessQaPredictions against Hugging Face's utils_qa.postprocess_qa_predictions run on the
// same logits (testdata/qa_postprocessing.json, made by
// testdata/make_qa_postprocessing_testdata.py).
#include "framework/train/qa_postprocessing.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/framework/train/qa_golden_cases.h"

namespace xlmr::train {
namespace {

using nlohmann::json;

TEST(QaPostprocessingTest, EqualsHuggingFaceUtilsQaOnRandomLogits) {
  const testing::QaGolden golden = testing::LoadQaGolden();
  ASSERT_GE(golden.cases.size(), 6u);
  int null_answers = 0, placeholders = 0;
  for (const testing::QaGoldenCase& c : golden.cases) {
    ASSERT_EQ(c.predictions.size(), golden.examples.size());
    for (const QaPrediction& p : c.predictions) {
      const std::string where = c.golden.dump().substr(0, 120) + " id " + p.id;
      // Texts, logits and null odds are the same float32 operations in the same order: exact.
      EXPECT_EQ(p.answer, c.golden.at("predictions").at(p.id).get<std::string>()) << where;
      null_answers += p.answer.empty();
      const json& nbest = c.golden.at("nbest").at(p.id);
      ASSERT_EQ(p.nbest.size(), nbest.size()) << where;
      for (size_t i = 0; i < p.nbest.size(); ++i) {
        EXPECT_EQ(p.nbest[i].text, nbest[i].at("text").get<std::string>()) << where << " #" << i;
        EXPECT_EQ(p.nbest[i].start_logit, nbest[i].at("start_logit").get<float>()) << where;
        EXPECT_EQ(p.nbest[i].end_logit, nbest[i].at("end_logit").get<float>()) << where;
        // numpy's float32 exp (its own SIMD code) and pairwise sum round differently from
        // std::exp and a running sum, and with HF's placeholder numpy works in float64: a few
        // float32 ulps of a probability <= 1.
        EXPECT_NEAR(p.nbest[i].probability, nbest[i].at("probability").get<double>(), 1e-6)
            << where << " #" << i;
        placeholders += p.nbest[i].placeholder;
      }
      if (c.options.version_2_with_negative) {
        ASSERT_TRUE(p.null_odds.has_value());
        EXPECT_EQ(*p.null_odds, c.golden.at("null_odds").at(p.id).get<float>()) << where;
      } else {
        EXPECT_FALSE(p.null_odds.has_value());
      }
    }
  }
  // The golden cases must include null answers and HF's "empty" placeholder.
  EXPECT_GE(null_answers, 2);
  EXPECT_GE(placeholders, 2);
}

}  // namespace
}  // namespace xlmr::train
