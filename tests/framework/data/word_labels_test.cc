// TokenizeTaggedSentences and TagLabelMap, with a tokenizer whose pieces per word are chosen
// by the test (the real tokenizer's word ids are checked against Hugging Face in
// tests/models/tokenizers/sentencepiece/sentencepiece_tokenizer_test.cc). Ids and indices are integers: exact comparisons.
#include "framework/data/word_labels.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;

// Word w is spelled with as many pieces as its length in characters ("" would have none),
// each piece id 100 + w; [0] ... [2] around them, cut on the right to max_length (keeping
// </s>), as SentencePieceTokenizer::EncodeWords does.
TokenizeWordsFn FakeTokenizer(int max_length) {
  return [max_length](const std::vector<std::string>& words) {
    WordTokens tokens{{0}, {-1}};
    for (size_t w = 0; w < words.size(); ++w) {
      for (size_t p = 0; p < words[w].size(); ++p) {
        if (static_cast<int>(tokens.token_ids.size()) + 1 >= max_length) break;
        tokens.token_ids.push_back(100 + static_cast<int32_t>(w));
        tokens.word_ids.push_back(static_cast<int32_t>(w));
      }
    }
    tokens.token_ids.push_back(2);
    tokens.word_ids.push_back(-1);
    return tokens;
  };
}

TaggedSentence Sentence(std::vector<std::string> words, std::vector<std::string> tags,
                        int64_t line) {
  return TaggedSentence{std::move(words), std::move(tags), line};
}

// HF run_ner (label_all_tokens=False): the tag on the first sub-token, -100 elsewhere.
TEST(WordLabelsTest, TagGoesOnTheFirstSubTokenOnly) {
  const std::vector<TaggedSentence> sentences = {
      Sentence({"abc", "d", "ef"}, {"B-PER", "O", "I-PER"}, 3),
      Sentence({"gh"}, {"O"}, 7),
  };
  TokenizedDataset dataset = TokenizedDataset::FromColumns(
      "train.conll", TokenizeTaggedSentences(sentences, FakeTokenizer(512)));
  ASSERT_TRUE(dataset.has_token_labels());
  EXPECT_THAT(dataset.label_names(), ElementsAre("B-PER", "I-PER", "O"));
  ASSERT_EQ(dataset.size(), 2);
  EXPECT_THAT(dataset.example(0), ElementsAre(0, 100, 100, 100, 101, 102, 102, 2));
  EXPECT_THAT(dataset.word_index(0), ElementsAre(-1, 0, -1, -1, 1, 2, -1, -1));
  EXPECT_THAT(dataset.token_label_index(0), ElementsAre(-1, 0, -1, -1, 2, 1, -1, -1));
  EXPECT_EQ(dataset.line(1), 7);
  EXPECT_EQ(dataset.label_name(0), std::nullopt);  // no sentence-level label

  // The training map's ids, not this file's indices: O = 0 here.
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"O", "B-PER", "I-PER"}, "config.json");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_TRUE(dataset.AssignTokenLabelIds(*map).ok());
  constexpr int32_t kI = TokenizedDataset::kIgnored;
  EXPECT_THAT(dataset.token_labels(0), ElementsAre(kI, 1, kI, kI, 0, 2, kI, kI));
  EXPECT_THAT(dataset.token_labels(1), ElementsAre(kI, 0, kI, kI));
}

TEST(WordLabelsTest, TruncatedAndPiecelessWordsGetNoLabelAndNoWordIndex) {
  // max_length 5: <s> a b b </s>; "b" is cut inside, "cc" entirely. "" has no piece.
  const std::vector<TaggedSentence> sentences = {
      Sentence({"a", "", "bbb", "cc"}, {"O", "B-LOC", "B-PER", "I-PER"}, 1)};
  const TokenizedColumns columns = TokenizeTaggedSentences(sentences, FakeTokenizer(5));
  EXPECT_THAT(columns.token_ids, ElementsAre(0, 100, 102, 102, 2));
  EXPECT_THAT(columns.word_index, ElementsAre(-1, 0, 2, -1, -1));
  // label_names hold every tag of the file, even those of lost words.
  EXPECT_THAT(columns.label_names, ElementsAre("B-LOC", "B-PER", "I-PER", "O"));
  EXPECT_THAT(columns.token_label_index, ElementsAre(-1, 3, 1, -1, -1));
}

TEST(WordLabelsTest, SentencesWithoutTagsHaveWordIndicesButNoLabels) {
  const std::vector<TaggedSentence> sentences = {Sentence({"ab", "c"}, {}, 2)};
  TokenizedDataset dataset = TokenizedDataset::FromColumns(
      "test.conll", TokenizeTaggedSentences(sentences, FakeTokenizer(512)));
  EXPECT_TRUE(dataset.label_names().empty());
  EXPECT_THAT(dataset.word_index(0), ElementsAre(-1, 0, -1, 1, -1));
  EXPECT_THAT(dataset.token_label_index(0), ElementsAre(-1, -1, -1, -1, -1));
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"O", "B-X"}, "config.json");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(dataset.AssignTokenLabelIds(*map).message(),
            "test.conll:2: sentence has no tags (--tags_column)");
}

TEST(WordLabelsTest, UnknownTagNamesFileLineAndFlag) {
  TokenizedDataset dataset = TokenizedDataset::FromColumns(
      "dev.conll", TokenizeTaggedSentences({Sentence({"a"}, {"O"}, 1),
                                            Sentence({"b"}, {"B-NEW"}, 4)},
                                           FakeTokenizer(512)));
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"B-PER", "O"}, "config.json");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(dataset.AssignTokenLabelIds(*map).message(),
            "dev.conll:4: tag 'B-NEW' does not occur in the training data (known tags: B-PER, "
            "O); check --tags_column");
  EXPECT_FALSE(dataset.has_token_label_ids());
}

// Python: sorted({"O", "B-PER", "I-PER", "B-LOC", "É", "10", "2", "1"}) ==
// ['1', '10', '2', 'B-LOC', 'B-PER', 'I-PER', 'O', 'É'] (code point order = UTF-8 byte order;
// no numeric order for integer-looking tags, unlike sentence labels).
TEST(TagLabelMapTest, SortsLikeRunNerGetLabelList) {
  absl::StatusOr<LabelMap> map = TagLabelMap(
      {Sentence({"a", "b", "c", "d"}, {"O", "B-PER", "I-PER", "B-LOC"}, 1),
       Sentence({"e", "f", "g", "h"}, {"\xC3\x89", "10", "2", "1"}, 3)},
      "train.conll");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_THAT(map->id2label(),
              ElementsAre("1", "10", "2", "B-LOC", "B-PER", "I-PER", "O", "\xC3\x89"));
}

TEST(TagLabelMapTest, NeedsTagsOnEverySentenceAndTwoDistinctTags) {
  EXPECT_EQ(TagLabelMap({Sentence({"a"}, {"O"}, 1), Sentence({"b"}, {}, 5)}, "t.conll")
                .status()
                .message(),
            "t.conll:5: sentence has no tags (--tags_column)");
  EXPECT_EQ(TagLabelMap({Sentence({"a", "b"}, {"O", "O"}, 1)}, "t.conll").status().message(),
            "t.conll: every word has the tag 'O'; token classification needs at least two "
            "distinct tags (check --tags_column)");
}

TEST(WordLabelsTest, SentenceLevelDataHasNoTokenLabels) {
  TokenizedColumns columns;
  columns.offsets = {0, 2};
  columns.token_ids = {0, 2};
  columns.lines = {2};
  columns.label_index = {0};
  columns.label_names = {"pos"};
  EXPECT_FALSE(TokenizedDataset::FromColumns("dev.tsv", columns).has_token_labels());
}

}  // namespace
}  // namespace xlmr::data
