// Byte-pair encoding of one pre-tokenized word by merge rank, as Hugging Face tokenizers' BPE
// model does it for RoBERTa (no dropout, no continuing-subword prefix, no end-of-word suffix).
//
// A word starts as one symbol per byte. While some adjacent pair of symbols has a merge, the
// pair with the lowest rank (earliest line of merges.txt) is merged into one symbol, the
// leftmost such pair when the same merge applies at several places. What is left are the
// word's tokens.
#ifndef XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_BPE_H_
#define XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_BPE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace xlmr::models::roberta {

// One line of merges.txt resolved to vocabulary ids: left + right -> merged.
struct Merge {
  int32_t left = 0;
  int32_t right = 0;
  int32_t merged = 0;
};

// A token of an encoded word: its id and the symbols [begin, end) of the word it covers.
struct WordToken {
  int32_t id = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

class BytePairEncoder {
 public:
  // `merges` in rank order (index = rank). Where merges.txt lists one pair twice, the first
  // (lower) rank counts, as in tokenizers.
  explicit BytePairEncoder(const std::vector<Merge>& merges);

  // Encodes a word given as its initial symbols' ids (one per byte). Returns the tokens in
  // order; their [begin, end) ranges tile [0, symbols.size()).
  std::vector<WordToken> EncodeWord(const std::vector<int32_t>& symbols) const;

 private:
  struct Rule {
    int32_t rank = 0;
    int32_t merged = 0;
  };
  // (left id, right id) -> the merge to apply.
  absl::flat_hash_map<std::pair<int32_t, int32_t>, Rule> rules_;
};

}  // namespace xlmr::models::roberta

#endif  // XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_BPE_H_
