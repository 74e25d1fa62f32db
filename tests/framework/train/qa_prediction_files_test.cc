// run_qa's prediction files against the ones Hugging Face's utils_qa wrote for the same logits
// (testdata/qa_postprocessing.json keeps their texts).
#include "framework/train/qa_prediction_files.h"

#include <fstream>
#include <iterator>
#include <vector>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/framework/train/qa_golden_cases.h"

namespace xlmr::train {
namespace {

using nlohmann::ordered_json;

// predictions.json and null_odds.json hold texts and float32 values written exactly: byte for
// byte. nbest_predictions.json also holds probabilities, which differ from numpy's by float32
// rounding (qa_postprocessing_test.cc): every key, its order and every other value are compared
// exactly, probabilities within 1e-6.
TEST(QaPredictionFilesTest, EqualTheFilesHuggingFaceWrites) {
  const testing::QaGolden golden = testing::LoadQaGolden();
  ASSERT_GE(golden.cases.size(), 6u);
  for (const testing::QaGoldenCase& c : golden.cases) {
    const auto& files = c.golden.at("files");
    const QaPredictionTexts texts = QaPredictionFileTexts(c.predictions);
    const std::string where = c.golden.dump().substr(0, 120);
    EXPECT_EQ(texts.predictions, files.at("predictions.json").get<std::string>()) << where;
    if (c.options.version_2_with_negative) {
      EXPECT_EQ(texts.null_odds, files.at("null_odds.json").get<std::string>()) << where;
    } else {
      EXPECT_TRUE(texts.null_odds.empty());
      EXPECT_FALSE(files.contains("null_odds.json"));
    }
    const ordered_json ours = ordered_json::parse(texts.nbest);
    const ordered_json theirs =
        ordered_json::parse(files.at("nbest_predictions.json").get<std::string>());
    ASSERT_EQ(ours.size(), theirs.size());
    for (auto a = ours.begin(), b = theirs.begin(); a != ours.end(); ++a, ++b) {
      ASSERT_EQ(a.key(), b.key()) << where;
      ASSERT_EQ(a->size(), b->size()) << where << " " << a.key();
      for (size_t i = 0; i < a->size(); ++i) {
        const ordered_json& x = (*a)[i];
        const ordered_json& y = (*b)[i];
        std::vector<std::string> x_keys, y_keys;
        for (auto it = x.begin(); it != x.end(); ++it) x_keys.push_back(it.key());
        for (auto it = y.begin(); it != y.end(); ++it) y_keys.push_back(it.key());
        EXPECT_EQ(x_keys, y_keys) << where << " " << a.key() << " #" << i;
        for (const std::string& key : x_keys) {
          if (key == "probability") {
            EXPECT_NEAR(x[key].get<double>(), y[key].get<double>(), 1e-6);
          } else {
            EXPECT_EQ(x[key], y[key]) << where << " " << a.key() << " #" << i << " " << key;
          }
        }
      }
    }
    // The layout: json.dumps(indent=4), then a newline.
    EXPECT_EQ(texts.nbest.substr(0, 6), "{\n    ");
    EXPECT_EQ(texts.nbest.back(), '\n');
  }
}

TEST(QaPredictionFilesTest, WritesTheThreeFilesUnderThePrefix) {
  QaPrediction p;
  p.id = "q1";
  p.answer = "Zürich";
  p.nbest = {{"Zürich", 1.5f, 2.25f, 1.0f}};
  p.null_odds = -3.75f;
  const std::string dir = ::testing::TempDir();
  const auto names = WriteQaPredictionFiles(dir, "eval_", {p});
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"eval_predictions.json", "eval_nbest_predictions.json",
                                              "eval_null_odds.json"}));
  std::ifstream file(dir + "/eval_predictions.json");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\n    \"q1\": \"Z\\u00fcrich\"\n}\n");
  std::ifstream odds(dir + "/eval_null_odds.json");
  const std::string odds_text((std::istreambuf_iterator<char>(odds)),
                              std::istreambuf_iterator<char>());
  EXPECT_EQ(odds_text, "{\n    \"q1\": -3.75\n}\n");
  EXPECT_TRUE(std::ifstream(dir + "/eval_nbest_predictions.json").good());
  EXPECT_FALSE(WriteQaPredictionFiles(dir + "/no_such_dir", "", {p}).ok());
}

}  // namespace
}  // namespace xlmr::train
