// WordPiece: BERT's split of one word into vocabulary pieces, as Hugging Face tokenizers'
// WordPiece model does it (models/wordpiece/mod.rs).
//
// Greedy longest-match-first: from the start of the word, take the longest prefix in the
// vocabulary, then the longest continuation spelled with the "##" prefix, and so on. A word
// with any stretch no piece matches, or with more than max_input_chars_per_word (100)
// characters, is the single unknown token. E.g. with {"un", "##aff", "##able"}:
// "unaffable" -> un ##aff ##able.
#ifndef XLMR_MODELS_TOKENIZERS_WORDPIECE_WORDPIECE_H_
#define XLMR_MODELS_TOKENIZERS_WORDPIECE_WORDPIECE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace xlmr::models::bert {

// One piece of a word: its id and the bytes [begin, end) of the word it spells.
struct WordPieceToken {
  int32_t id = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

class WordPiece {
 public:
  static constexpr int kMaxInputCharsPerWord = 100;
  static constexpr absl::string_view kContinuingPrefix = "##";

  // `vocab` maps a piece (continuations with their "##") to its id; `unk_id` is [UNK]'s.
  WordPiece(absl::flat_hash_map<std::string, int32_t> vocab, int32_t unk_id);

  // Appends the pieces of `word` (UTF-8, already normalized) to `out`: the greedy split, or one
  // unk_id spanning the whole word (see above). An empty word has no pieces.
  void Tokenize(absl::string_view word, std::vector<WordPieceToken>* out) const;

  // The id of `piece`, or -1 when the vocabulary lacks it.
  int32_t Find(absl::string_view piece) const;

 private:
  absl::flat_hash_map<std::string, int32_t> vocab_;
  int32_t unk_id_;
};

}  // namespace xlmr::models::bert

#endif  // XLMR_MODELS_TOKENIZERS_WORDPIECE_WORDPIECE_H_
