// Tagged sentences (tagged_sentence_reader.h) to token-level examples, aligned as Hugging
// Face's run_ner.py does with its default label_all_tokens=False: a word's tag goes on the
// word's FIRST sub-token; special tokens and every later sub-token of a word get no label
// (-100 after TokenizedDataset::AssignTokenLabelIds, the loss's ignore_index).
//
// The result is a TokenizedDataset with token_label_index and word_index
// (tokenized_dataset.h): word_index marks the token each word starts, which is where a
// prediction for that word is read. A word with no first sub-token has no label and no
// prediction: words cut off by --max_seq_length truncation, and words the tokenizer spells
// with no piece (as in HF, whose word_ids() never names them). Tagged data is tokenized in
// memory on every run; the token cache is not used for it.
//
// This file cannot call the XLM-R tokenizer (framework/ never includes models/); the caller
// passes it as a TokenizeWordsFn, e.g.
//   [&](const std::vector<std::string>& words) {
//     models::WordEncoding e = tokenizer.EncodeWords(words, max_seq_length);
//     return data::WordTokens{std::move(e.input_ids), std::move(e.word_ids)};
//   }
#ifndef XLMR_FRAMEWORK_DATA_WORD_LABELS_H_
#define XLMR_FRAMEWORK_DATA_WORD_LABELS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data/label_map.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/data/tokenized_dataset.h"

namespace xlmr::data {

// One sentence's tokens, special tokens included and already truncated, and per token the
// index of its word (-1 for special tokens). Word indices never decrease along the tokens.
struct WordTokens {
  std::vector<int32_t> token_ids;
  std::vector<int32_t> word_ids;
};
using TokenizeWordsFn = std::function<WordTokens(const std::vector<std::string>& words)>;

// Tokenizes every sentence in order. label_names are the distinct tags of all sentences,
// sorted by bytes; label_index is -1 for every example. A sentence without tags gets
// token_label_index -1 everywhere (prediction input). Each result of `tokenize` must have at
// least one token, equally many word ids, and word ids in [-1, words) never decreasing
// (checked: breaking this is a programming error).
TokenizedColumns TokenizeTaggedSentences(const std::vector<TaggedSentence>& sentences,
                                         const TokenizeWordsFn& tokenize);

// The training tags as labels, in Hugging Face run_ner's order: get_label_list is
// sorted(set(tags)) on Python strings, i.e. byte order of the UTF-8 text (so "B-PER" < "I-PER"
// < "O"). Unlike LabelMap::FromTrainingLabels there is no numeric order for tags that all
// look like integers: run_ner sorts them as strings too. Errors, naming `file`: a sentence
// without tags (and its line), or fewer than two distinct tags.
absl::StatusOr<LabelMap> TagLabelMap(const std::vector<TaggedSentence>& sentences,
                                     const std::string& file);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_WORD_LABELS_H_
