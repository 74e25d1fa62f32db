#include "models/tokenizers/wordpiece/wordpiece.h"

#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/utf8.h"

namespace xlmr::models::bert {

WordPiece::WordPiece(absl::flat_hash_map<std::string, int32_t> vocab, int32_t unk_id)
    : vocab_(std::move(vocab)), unk_id_(unk_id) {}

int32_t WordPiece::Find(absl::string_view piece) const {
  const auto it = vocab_.find(piece);
  return it == vocab_.end() ? -1 : it->second;
}

void WordPiece::Tokenize(absl::string_view word, std::vector<WordPieceToken>* out) const {
  const int64_t word_bytes = static_cast<int64_t>(word.size());
  // Character boundaries: a piece never ends inside a character.
  const std::vector<size_t> starts = core::Utf8CharStarts(word);
  const size_t chars = starts.size() - 1;
  if (chars > static_cast<size_t>(kMaxInputCharsPerWord)) {
    out->push_back({unk_id_, 0, word_bytes});
    return;
  }
  std::vector<WordPieceToken> pieces;
  std::string candidate;
  for (size_t begin = 0; begin < chars;) {
    int32_t found = -1;
    size_t end = chars;
    for (; end > begin; --end) {
      const absl::string_view stretch = word.substr(starts[begin], starts[end] - starts[begin]);
      // Only the first piece of a word goes without the continuing prefix.
      candidate = begin > 0 ? absl::StrCat(kContinuingPrefix, stretch) : std::string(stretch);
      found = Find(candidate);
      if (found >= 0) break;
    }
    if (found < 0) {
      out->push_back({unk_id_, 0, word_bytes});
      return;
    }
    pieces.push_back(
        {found, static_cast<int64_t>(starts[begin]), static_cast<int64_t>(starts[end])});
    begin = end;
  }
  out->insert(out->end(), pieces.begin(), pieces.end());
}

}  // namespace xlmr::models::bert
