#include "models/tokenizers/sentencepiece/piece_offsets.h"

#include <string>
#include <unordered_map>
#include <utility>

#include "framework/core/utf8.h"

namespace xlmr::models::internal {
namespace {

constexpr absl::string_view kMeta = "\xE2\x96\x81";  // U+2581, SentencePiece's space
// HF's Precompiled normalizer tries a whole grapheme only when it is shorter than 6 bytes.
constexpr size_t kMaxGraphemeBytes = 5;

// The normalized text with, for each of its bytes, the original character it belongs to.
struct AlignedText {
  std::string text;
  std::vector<ByteSpan> source;  // [text.size()]
};

class Normalizer {
 public:
  explicit Normalizer(const NormalizeFn& normalize) : normalize_(normalize) {}
  const std::string& Of(absl::string_view s) {
    auto [it, inserted] = cache_.try_emplace(std::string(s));
    if (inserted) it->second = normalize_(s);
    return it->second;
  }

 private:
  const NormalizeFn& normalize_;
  std::unordered_map<std::string, std::string> cache_;
};

void Append(absl::string_view normalized, ByteSpan source, AlignedText* out) {
  out->text.append(normalized.data(), normalized.size());
  out->source.insert(out->source.end(), normalized.size(), source);
}

AlignedText AlignNormalizedText(absl::string_view text, Normalizer* normalizer) {
  const std::vector<size_t> starts = core::Utf8CharStarts(text);
  const size_t chars = starts.size() - 1;
  AlignedText out;
  for (size_t i = 0; i < chars;) {
    const ByteSpan here{static_cast<int64_t>(starts[i]), static_cast<int64_t>(starts[i + 1])};
    const std::string first = normalizer->Of(text.substr(starts[i], starts[i + 1] - starts[i]));
    // A combining mark is never ASCII: pairs ending in ASCII are two graphemes for HF.
    if (i + 1 < chars && static_cast<unsigned char>(text[starts[i + 1]]) >= 0x80 &&
        starts[i + 2] - starts[i] <= kMaxGraphemeBytes && !first.empty()) {
      const std::string second =
          normalizer->Of(text.substr(starts[i + 1], starts[i + 2] - starts[i + 1]));
      const std::string pair = normalizer->Of(text.substr(starts[i], starts[i + 2] - starts[i]));
      if (!second.empty() && pair != first + second) {
        const std::vector<size_t> new_starts = core::Utf8CharStarts(pair);
        for (size_t k = 0; k + 1 < new_starts.size(); ++k) {
          const size_t old = i + (k < 1 ? k : 1);
          Append(absl::string_view(pair).substr(new_starts[k], new_starts[k + 1] - new_starts[k]),
                 {static_cast<int64_t>(starts[old]), static_cast<int64_t>(starts[old + 1])}, &out);
        }
        i += 2;
        continue;
      }
    }
    Append(first, here, &out);
    ++i;
  }
  return out;
}

absl::string_view WithoutLeadingMeta(absl::string_view piece) {
  while (piece.size() >= kMeta.size() && piece.substr(0, kMeta.size()) == kMeta) {
    piece.remove_prefix(kMeta.size());
  }
  return piece;
}

std::vector<ByteSpan> SentencePieceSpans(const std::vector<SentencePiece>& pieces) {
  std::vector<ByteSpan> spans;
  spans.reserve(pieces.size());
  for (const SentencePiece& piece : pieces) spans.push_back({piece.begin, piece.end});
  return spans;
}

}  // namespace

std::vector<ByteSpan> AlignPieces(absl::string_view text, const std::vector<SentencePiece>& pieces,
                                  const NormalizeFn& normalize) {
  Normalizer normalizer(normalize);
  const AlignedText aligned = AlignNormalizedText(text, &normalizer);
  const absl::string_view normalized = aligned.text;
  std::vector<ByteSpan> spans;
  spans.reserve(pieces.size());
  size_t at = 0;  // bytes of `normalized` consumed by the pieces so far
  for (const SentencePiece& piece : pieces) {
    const absl::string_view body = WithoutLeadingMeta(piece.piece);
    if (body.empty()) {  // a lone "▁": the first character of the word it starts
      if (at >= normalized.size()) return SentencePieceSpans(pieces);
      spans.push_back(aligned.source[at]);
      continue;
    }
    if (normalized.substr(at, body.size()) != body) return SentencePieceSpans(pieces);
    spans.push_back({aligned.source[at].begin, aligned.source[at + body.size() - 1].end});
    at += body.size();
  }
  if (at != normalized.size()) return SentencePieceSpans(pieces);
  return spans;
}

}  // namespace xlmr::models::internal
