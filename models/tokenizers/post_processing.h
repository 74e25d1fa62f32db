// How a tokenizer turns a text's (or a pair's) ids into the model's sequence: the special tokens
// around them and `longest_first` truncation, as Hugging Face's fast tokenizers post-process.
// Every family's tokenizer finds the ids of its texts its own way and assembles them here:
//
//   Encoding e = AssembleRobertaStyle(EncodeText(a), EncodeText(b), max_length, bos, eos,
//                                     PairTruncation::kFastTokenizer);
//   WordEncoding w = AssembleWords(words, max_length, bos, eos,
//                                  [&](absl::string_view word) { return EncodeText(word); });
//
// RoBERTa's template (tokenizers' RobertaProcessing) serves XLM-R, RoBERTa and CamemBERT; BERT's
// ([CLS] A [SEP] B [SEP], with token types) is written in wordpiece/bert_tokenizer.cc, on
// PairKeepLengths.
#ifndef XLMR_MODELS_TOKENIZERS_POST_PROCESSING_H_
#define XLMR_MODELS_TOKENIZERS_POST_PROCESSING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::models {

// How `longest_first` shares `budget` = max_length - specials tokens between the two texts of a
// pair. Both HF implementations keep a text whole when it has at most half the budget and give
// the rest to the other text; they differ only when both texts must be cut and the budget is
// odd: the slow rule gives the odd token to the first text, the fast rule to the longer text (to
// the second one on a tie). E.g. 3 + 3 tokens, max_length 7: slow keeps 2 + 1, fast keeps 1 + 2.
enum class PairTruncation {
  // HF `PreTrainedTokenizer.truncate_sequences` (slow, Python; transformers <= 4.x
  // XLMRobertaTokenizer).
  kSlowTokenizer,
  // HF tokenizers `truncate_encodings` (Rust): the fast tokenizers AutoTokenizer returns by
  // default, and the only ones in transformers 5.
  kFastTokenizer,
};

// Lengths that `longest_first` keeps of two texts with `len_a` and `len_b` tokens when only
// `budget` tokens fit. Returns {len_a, len_b} when they fit. Requires len_a, len_b, budget >= 0.
std::pair<int64_t, int64_t> PairKeepLengths(int64_t len_a, int64_t len_b, int64_t budget,
                                            PairTruncation rule);

// Special ids RoBERTa's template puts around a single text and around a pair.
inline constexpr int kRobertaStyleSpecialTokensSingle = 2;  // <s> A </s>
inline constexpr int kRobertaStyleSpecialTokensPair = 4;    // <s> A </s></s> B </s>

// RoBERTa's template: single `<s> A </s>` = [bos] + A + [eos] (A cut on the right to
// max_length - 2 ids); pair `<s> A </s></s> B </s>` = [bos] + A + [eos, eos] + B + [eos], the
// two cut by PairKeepLengths(budget max_length - 4, rule). An empty `b` is a pair with no tokens.
// attention_mask all 1. Requires max_length >= 2 (single) or 4 (pair).
Encoding AssembleRobertaStyle(const std::vector<int32_t>& a,
                              const std::optional<std::vector<int32_t>>& b, int max_length,
                              int32_t bos, int32_t eos, PairTruncation rule);

// A sentence given as words (HF's is_split_into_words=True, truncation=True): [first] + the ids
// `encode_word` gives word 0 + word 1 + ... + [last], cut on the right to max_length ids (`last`
// kept); word_ids names each id's word, -1 for the two specials. Words cut off, or that
// encode_word spells with no id, appear in no word_ids. Requires max_length >= 2.
WordEncoding AssembleWords(const std::vector<std::string>& words, int max_length, int32_t first,
                           int32_t last,
                           absl::FunctionRef<std::vector<int32_t>(absl::string_view)> encode_word);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_TOKENIZERS_POST_PROCESSING_H_
