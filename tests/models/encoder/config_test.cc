#include "models/encoder/config.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::models {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Runfiles-relative: Bazel runs tests in the main workspace's runfiles root.
const char kHubBaseConfig[] = "tests/models/encoder/testdata/hub_base_config.json";
// What SaveEncoderConfig must write for the hub base config with three labels; the generator
// script checks that transformers' XLMRobertaConfig loads this file with the same values.
const char kSavedConfigExpected[] = "tests/models/encoder/testdata/saved_config_expected.json";

json ReadJson(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << path;
  return json::parse(file);
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

// Floating-point fields are compared exactly: they are parsed from decimal text by the same
// JSON library on both sides, so any difference is a bug, not rounding.
TEST(EncoderConfigTest, HubBaseConfigLoadsTheFileValues) {
  absl::StatusOr<EncoderConfig> config = LoadEncoderConfig(kHubBaseConfig);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->vocab_size, 250002);
  EXPECT_EQ(config->hidden_size, 768);
  EXPECT_EQ(config->num_hidden_layers, 12);
  EXPECT_EQ(config->num_attention_heads, 12);
  EXPECT_EQ(config->head_dim(), 64);
  EXPECT_EQ(config->intermediate_size, 3072);
  EXPECT_EQ(config->hidden_act, "gelu");
  EXPECT_EQ(config->hidden_dropout_prob, 0.1);
  EXPECT_EQ(config->attention_probs_dropout_prob, 0.1);
  EXPECT_FALSE(config->classifier_dropout.has_value());  // null in the file
  EXPECT_EQ(config->max_position_embeddings, 514);        // not the class default 512
  EXPECT_EQ(config->type_vocab_size, 1);                  // not the class default 2
  EXPECT_EQ(config->layer_norm_eps, 1e-5);                // not the class default 1e-12
  EXPECT_EQ(config->pad_token_id, 1);
  EXPECT_EQ(config->bos_token_id, 0);
  EXPECT_EQ(config->eos_token_id, 2);
  EXPECT_EQ(config->initializer_range, 0.02);
  EXPECT_THAT(config->id2label, ElementsAre("LABEL_0", "LABEL_1"));  // HF's default labels
  EXPECT_FALSE(config->problem_type.has_value());
  EXPECT_EQ(config->raw.at("output_past"), true);
}

TEST(EncoderConfigTest, AbsentKeysTakeTheClassDefaults) {
  absl::StatusOr<EncoderConfig> config = EncoderConfigFromJson(json::object(), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->vocab_size, 30522);
  EXPECT_EQ(config->hidden_size, 768);
  EXPECT_EQ(config->num_hidden_layers, 12);
  EXPECT_EQ(config->num_attention_heads, 12);
  EXPECT_EQ(config->intermediate_size, 3072);
  EXPECT_EQ(config->max_position_embeddings, 512);
  EXPECT_EQ(config->type_vocab_size, 2);
  EXPECT_EQ(config->layer_norm_eps, 1e-12);
  EXPECT_EQ(config->hidden_dropout_prob, 0.1);
  EXPECT_EQ(config->attention_probs_dropout_prob, 0.1);
  EXPECT_FALSE(config->classifier_dropout.has_value());
  EXPECT_EQ(config->pad_token_id, 1);
  EXPECT_EQ(config->bos_token_id, 0);
  EXPECT_EQ(config->eos_token_id, 2);
  EXPECT_EQ(config->initializer_range, 0.02);
  EXPECT_EQ(config->num_labels(), 2);
}

TEST(EncoderConfigTest, LabelsComeFromId2LabelLabel2IdOrNumLabels) {
  absl::StatusOr<EncoderConfig> config = EncoderConfigFromJson(
      json{{"id2label", {{"1", "pos"}, {"0", "neg"}, {"2", "neu"}}},
           {"label2id", {{"neg", 0}, {"pos", 1}, {"neu", 2}}},
           {"problem_type", "single_label_classification"},
           {"classifier_dropout", 0.2}},
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->id2label, ElementsAre("neg", "pos", "neu"));  // ordered by id
  EXPECT_THAT(config->label2id(), ElementsAre(Pair("neg", 0), Pair("pos", 1), Pair("neu", 2)));
  EXPECT_EQ(config->problem_type, "single_label_classification");
  EXPECT_EQ(config->classifier_dropout, 0.2);

  config = EncoderConfigFromJson(json{{"label2id", {{"b", 1}, {"a", 0}}}}, "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->id2label, ElementsAre("a", "b"));

  config = EncoderConfigFromJson(json{{"num_labels", 3}}, "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->id2label, ElementsAre("LABEL_0", "LABEL_1", "LABEL_2"));
}

struct InvalidCase {
  json patch;            // merged over the hub base config
  std::string expected;  // substring of the error message
};

void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.patch.dump(); }

class EncoderConfigInvalidTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(EncoderConfigInvalidTest, ErrorNamesFileAndKey) {
  json object = ReadJson(kHubBaseConfig);
  object.merge_patch(GetParam().patch);
  absl::StatusOr<EncoderConfig> config = EncoderConfigFromJson(object, "model/config.json");
  ASSERT_FALSE(config.ok()) << GetParam().patch.dump();
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EncoderConfigInvalidTest,
    ::testing::Values(
        InvalidCase{{{"num_attention_heads", 5}},
                    "model/config.json: hidden_size (768) must be divisible by "
                    "num_attention_heads (5)"},
        InvalidCase{{{"hidden_act", "gelu_new"}},
                    "model/config.json: hidden_act is \"gelu_new\", but only \"gelu\""},
        InvalidCase{{{"position_embedding_type", "relative_key"}},
                    "model/config.json: position_embedding_type is \"relative_key\""},
        InvalidCase{{{"model_type", "electra"}}, "model/config.json: model_type is \"electra\", expected one of"},
        InvalidCase{{{"hidden_size", 0}}, "model/config.json: hidden_size (0) must be positive"},
        InvalidCase{{{"num_hidden_layers", -1}}, "model/config.json: num_hidden_layers (-1)"},
        InvalidCase{{{"vocab_size", "250002"}},
                    "model/config.json: vocab_size must be an integer, got \"250002\""},
        InvalidCase{{{"intermediate_size", 3072.5}},
                    "model/config.json: intermediate_size must be an integer"},
        InvalidCase{{{"layer_norm_eps", 0}}, "model/config.json: layer_norm_eps (0) must be positive"},
        InvalidCase{{{"hidden_dropout_prob", 1.0}},
                    "model/config.json: hidden_dropout_prob (1) must be in [0, 1)"},
        InvalidCase{{{"attention_probs_dropout_prob", -0.1}},
                    "model/config.json: attention_probs_dropout_prob (-0.1) must be in [0, 1)"},
        InvalidCase{{{"classifier_dropout", 1.5}}, "model/config.json: classifier_dropout (1.5)"},
        InvalidCase{{{"pad_token_id", 250002}},
                    "model/config.json: pad_token_id (250002) must be in [0, vocab_size = 250002)"},
        InvalidCase{{{"max_position_embeddings", 2}},
                    "model/config.json: max_position_embeddings (2) must exceed pad_token_id + 1"},
        InvalidCase{{{"id2label", {{"0", "a"}, {"2", "b"}}}},
                    "model/config.json: id2label key \"2\" must be an integer in [0, 2)"},
        InvalidCase{{{"id2label", {{"0", "a"}, {"01", "b"}}}},
                    "model/config.json: id2label key \"01\""},
        InvalidCase{{{"id2label", {{"0", "a"}, {"1", 7}}}},
                    "model/config.json: id2label[\"1\"] must be a string"},
        InvalidCase{{{"id2label", {{"0", "a"}, {"1", "a"}}}},
                    "model/config.json: id2label names must be unique"},
        InvalidCase{{{"id2label", json::object()}}, "model/config.json: id2label must be a non-empty"},
        InvalidCase{{{"id2label", {{"0", "a"}, {"1", "b"}}}, {"label2id", {{"a", 1}, {"b", 0}}}},
                    "model/config.json: label2id must be the inverse of id2label"},
        InvalidCase{{{"label2id", {{"a", 0}, {"b", 2}}}},
                    "model/config.json: label2id[\"b\"] = 2: ids must be the integers 0..1"},
        InvalidCase{{{"id2label", {{"0", "a"}, {"1", "b"}}}, {"num_labels", 3}},
                    "model/config.json: num_labels (3) disagrees with the 2 labels of id2label"},
        InvalidCase{{{"problem_type", "ranking"}}, "model/config.json: problem_type is \"ranking\""}));

TEST(EncoderConfigTest, FileErrorsNameThePath) {
  absl::StatusOr<EncoderConfig> missing = LoadEncoderConfig("no/such/config.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("no/such/config.json"));

  const std::string broken = TempPath("broken_config.json");
  std::ofstream(broken) << "{\"hidden_size\": 768,";
  absl::StatusOr<EncoderConfig> unparsable = LoadEncoderConfig(broken);
  ASSERT_FALSE(unparsable.ok());
  EXPECT_THAT(std::string(unparsable.status().message()),
              HasSubstr(broken + ": not valid JSON"));

  const std::string wrong_value = TempPath("bad_heads_config.json");
  std::ofstream(wrong_value) << "{\"num_attention_heads\": 7}";
  absl::StatusOr<EncoderConfig> invalid = LoadEncoderConfig(wrong_value);
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(std::string(invalid.status().message()),
              HasSubstr(wrong_value + ": hidden_size (768) must be divisible"));
}

EncoderConfig ThreeLabelClassifier() {
  absl::StatusOr<EncoderConfig> config = LoadEncoderConfig(kHubBaseConfig);
  EXPECT_TRUE(config.ok()) << config.status();
  config->id2label = {"negative", "neutral", "positive"};
  config->problem_type = "single_label_classification";
  return *config;
}

TEST(EncoderConfigTest, SavedConfigIsWhatHuggingFaceWritesForClassification) {
  const std::string path = TempPath("saved_config.json");
  ASSERT_TRUE(SaveEncoderConfig(ThreeLabelClassifier(), path).ok());
  const json saved = ReadJson(path);
  EXPECT_EQ(saved, ReadJson(kSavedConfigExpected)) << "written:\n" << saved.dump(2);
  EXPECT_EQ(saved.at("architectures"), json::array({"XLMRobertaForSequenceClassification"}));
  EXPECT_EQ(saved.at("model_type"), "xlm-roberta");
  EXPECT_EQ(saved.at("id2label"), (json{{"0", "negative"}, {"1", "neutral"}, {"2", "positive"}}));
  EXPECT_EQ(saved.at("label2id"), (json{{"negative", 0}, {"neutral", 1}, {"positive", 2}}));
  EXPECT_EQ(saved.at("problem_type"), "single_label_classification");
  EXPECT_TRUE(saved.at("classifier_dropout").is_null());
  // Keys this code does not know survive the round trip.
  EXPECT_EQ(saved.at("output_past"), true);
  EXPECT_EQ(saved.at("use_cache"), true);
  EXPECT_EQ(saved.at("torch_dtype"), "float32");
  EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "temporary file left behind";
}

// model_type "roberta" is the RoBERTa family: read, kept, and HF's Roberta* class per task
// (architectures[0] of that family names the task, as for XLM-R).
TEST(EncoderConfigTest, RobertaModelTypeKeepsItsFamilyAndClassNames) {
  json object = ReadJson(kHubBaseConfig);
  object["model_type"] = "roberta";
  object["architectures"] = json::array({"RobertaForTokenClassification"});
  absl::StatusOr<EncoderConfig> config = EncoderConfigFromJson(object, "roberta/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_STREQ(config->family->model_type, "roberta");
  EXPECT_EQ(config->task, Task::kTokenClassification);
  const std::pair<Task, const char*> classes[] = {
      {Task::kSequenceClassification, "RobertaForSequenceClassification"},
      {Task::kRegression, "RobertaForSequenceClassification"},
      {Task::kTokenClassification, "RobertaForTokenClassification"},
      {Task::kQuestionAnswering, "RobertaForQuestionAnswering"}};
  for (const auto& [task, name] : classes) {
    config->task = task;
    const json saved = EncoderConfigToJson(*config);
    EXPECT_EQ(saved.at("model_type"), "roberta");
    EXPECT_EQ(saved.at("architectures"), json::array({name})) << TaskName(task);
  }
  EXPECT_EQ(LoadEncoderConfig(kHubBaseConfig)->family, &XlmRobertaFamily());
}

// model_type "camembert" is the CamemBERT family: read, kept, and HF's Camembert* class per
// task, which also names the task when read back.
TEST(EncoderConfigTest, CamembertModelTypeKeepsItsFamilyAndClassNames) {
  json object = ReadJson(kHubBaseConfig);
  object["model_type"] = "camembert";
  object["architectures"] = json::array({"CamembertForQuestionAnswering"});
  object.erase("id2label");
  object.erase("label2id");
  absl::StatusOr<EncoderConfig> config = EncoderConfigFromJson(object, "camembert/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_STREQ(config->family->model_type, "camembert");
  EXPECT_EQ(config->task, Task::kQuestionAnswering);
  const std::pair<Task, const char*> classes[] = {
      {Task::kSequenceClassification, "CamembertForSequenceClassification"},
      {Task::kRegression, "CamembertForSequenceClassification"},
      {Task::kTokenClassification, "CamembertForTokenClassification"},
      {Task::kQuestionAnswering, "CamembertForQuestionAnswering"}};
  for (const auto& [task, name] : classes) {
    config->task = task;
    const json saved = EncoderConfigToJson(*config);
    EXPECT_EQ(saved.at("model_type"), "camembert");
    EXPECT_EQ(saved.at("architectures"), json::array({name})) << TaskName(task);
    absl::StatusOr<EncoderConfig> reread = EncoderConfigFromJson(saved, "saved/config.json");
    ASSERT_TRUE(reread.ok()) << reread.status();
    EXPECT_STREQ(reread->family->model_type, "camembert");
    // Regression is read back from problem_type, the class being sequence classification's.
    EXPECT_EQ(reread->task, task) << TaskName(task);
  }
}

// The error lists every family config.json may name.
TEST(EncoderConfigTest, UnknownModelTypeListsTheFamilies) {
  json object = ReadJson(kHubBaseConfig);
  object["model_type"] = "electra";
  const absl::Status status = EncoderConfigFromJson(object, "electra/config.json").status();
  EXPECT_EQ(std::string(status.message()),
            "electra/config.json: model_type is \"electra\", expected one of \"xlm-roberta\", \"roberta\", "
            "\"bert\", \"camembert\"");
}

TEST(EncoderConfigTest, SaveThenLoadGivesTheSameConfig) {
  EncoderConfig original = ThreeLabelClassifier();
  original.classifier_dropout = 0.25;
  original.raw["num_labels"] = 7;  // stale: must not survive, id2label decides
  const std::string path = TempPath("round_trip_config.json");
  ASSERT_TRUE(SaveEncoderConfig(original, path).ok());
  absl::StatusOr<EncoderConfig> loaded = LoadEncoderConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->id2label, original.id2label);
  EXPECT_EQ(loaded->problem_type, original.problem_type);
  EXPECT_EQ(loaded->classifier_dropout, 0.25);
  EXPECT_EQ(loaded->layer_norm_eps, original.layer_norm_eps);
  EXPECT_EQ(loaded->vocab_size, original.vocab_size);
  EXPECT_FALSE(loaded->raw.contains("num_labels"));
  EXPECT_EQ(EncoderConfigToJson(*loaded), EncoderConfigToJson(original));
}

TEST(EncoderConfigTest, SaveToAMissingDirectoryFailsWithThePath) {
  absl::Status status = SaveEncoderConfig(ThreeLabelClassifier(), "no/such/dir/config.json");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("no/such/dir/config.json.tmp"));
}

}  // namespace
}  // namespace xlmr::models
