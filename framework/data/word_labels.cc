#include "framework/data/word_labels.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::data {

TokenizedColumns TokenizeTaggedSentences(const std::vector<TaggedSentence>& sentences,
                                         const TokenizeWordsFn& tokenize) {
  TokenizedColumns columns;
  std::set<std::string> distinct;
  for (const TaggedSentence& sentence : sentences) {
    distinct.insert(sentence.tags.begin(), sentence.tags.end());
  }
  columns.label_names.assign(distinct.begin(), distinct.end());  // std::set: byte order
  absl::flat_hash_map<std::string, int32_t> index_of;
  for (size_t i = 0; i < columns.label_names.size(); ++i) {
    index_of[columns.label_names[i]] = static_cast<int32_t>(i);
  }
  for (const TaggedSentence& sentence : sentences) {
    XLMR_CHECK(sentence.tags.empty() || sentence.tags.size() == sentence.words.size())
        << "line " << sentence.line << ": " << sentence.words.size() << " words, "
        << sentence.tags.size() << " tags";
    const WordTokens tokens = tokenize(sentence.words);
    XLMR_CHECK(!tokens.token_ids.empty()) << "line " << sentence.line << ": no tokens";
    XLMR_CHECK_EQ(tokens.word_ids.size(), tokens.token_ids.size()) << "line " << sentence.line;
    const auto num_words = static_cast<int32_t>(sentence.words.size());
    int32_t previous = -1;  // run_ner's previous_word_idx (None for specials)
    for (size_t t = 0; t < tokens.token_ids.size(); ++t) {
      const int32_t word = tokens.word_ids[t];
      XLMR_CHECK(word >= -1 && word < num_words)
          << "line " << sentence.line << ": word id " << word << " of " << num_words;
      // run_ner compares each token's word with the previous token's; with word ids that never
      // decrease, a change means the first sub-token of a new word.
      const bool starts_word = word >= 0 && word != previous;
      XLMR_CHECK(!starts_word || word > previous)
          << "line " << sentence.line << ": word ids decrease";
      columns.token_ids.push_back(tokens.token_ids[t]);
      columns.word_index.push_back(starts_word ? word : -1);
      columns.token_label_index.push_back(
          starts_word && !sentence.tags.empty() ? index_of.at(sentence.tags[word]) : -1);
      if (word >= 0) previous = word;
    }
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(sentence.line);
    columns.label_index.push_back(-1);
  }
  return columns;
}

absl::StatusOr<LabelMap> TagLabelMap(const std::vector<TaggedSentence>& sentences,
                                     const std::string& file) {
  std::set<std::string> distinct;
  for (const TaggedSentence& sentence : sentences) {
    if (sentence.tags.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", sentence.line, ": sentence has no tags (--tags_column)"));
    }
    distinct.insert(sentence.tags.begin(), sentence.tags.end());
  }
  if (distinct.empty()) return absl::InvalidArgumentError(absl::StrCat(file, ": no tags"));
  if (distinct.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": every word has the tag '", *distinct.begin(),
        "'; token classification needs at least two distinct tags (check --tags_column)"));
  }
  return LabelMap::FromId2Label(std::vector<std::string>(distinct.begin(), distinct.end()), file);
}

}  // namespace xlmr::data
