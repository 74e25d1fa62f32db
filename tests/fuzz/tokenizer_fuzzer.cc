// Fuzz target: the tokenizer on arbitrary bytes, as a user's TSV/CSV text reaches it (those
// readers pass raw bytes through, so invalid UTF-8, NUL and control bytes get here; JSONL
// strings are valid UTF-8 but may hold any code point). The model is the embedded default's
// recipes/data/langid/sentencepiece.bpe.model, loaded once; the corpus test and tools/fuzz.sh
// both run from the workspace root, where that relative path resolves.
//
// Input layout: byte 0 picks single text or pair and the pair rule, byte 1 the max_length,
// byte 2 where a pair is split; the rest is the text. Besides crashes and sanitizer reports,
// the harness aborts on any broken promise of SentencePieceTokenizer::Encode and EncodeTextWithOffsets
// (tokenizer.h), so that a wrong cut, an id outside the embedding table or a span outside the
// text is a finding too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"

namespace {

using xlmr::models::Encoding;
using xlmr::models::PairTruncation;
using xlmr::models::SentencePieceTokenizer;

constexpr char kModelPath[] = "recipes/data/langid/sentencepiece.bpe.model";

const SentencePieceTokenizer& Tokenizer() {
  static const SentencePieceTokenizer* tokenizer = [] {
    // No vocab_size limit: the check against the config's table is Load's, not under test here.
    absl::StatusOr<SentencePieceTokenizer> loaded = SentencePieceTokenizer::Load(kModelPath, std::numeric_limits<int64_t>::max());
    if (!loaded.ok()) {
      std::fprintf(stderr, "tokenizer_fuzzer: %s (run from the workspace root)\n",
                   std::string(loaded.status().message()).c_str());
      std::abort();
    }
    return new SentencePieceTokenizer(std::move(*loaded));
  }();
  return *tokenizer;
}

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "tokenizer_fuzzer: broken promise: %s\n", what);
  std::abort();
}

// Every id is one the model can embed and none is a special token the text cannot produce.
void CheckTextIds(const std::vector<int32_t>& ids, const SentencePieceTokenizer& tokenizer) {
  for (int32_t id : ids) {
    Require(id == SentencePieceTokenizer::kUnk || (id > SentencePieceTokenizer::kUnk && id < tokenizer.mask_id()),
            "a text id outside [kUnk, mask_id)");
  }
}

// EncodeTextWithOffsets (tokenizer.h): EncodeText's ids, one span each, inside the text, the
// spans' starts in text order.
void CheckSpans(absl::string_view text, const std::vector<int32_t>& ids, const SentencePieceTokenizer& tokenizer) {
  std::vector<xlmr::models::TokenSpan> spans;
  Require(tokenizer.EncodeTextWithOffsets(text, &spans) == ids, "EncodeTextWithOffsets ids differ from EncodeText");
  Require(spans.size() == ids.size(), "not one span per id");
  int64_t previous_begin = 0;
  for (const xlmr::models::TokenSpan& span : spans) {
    Require(0 <= span.begin && span.begin <= span.end && span.end <= static_cast<int64_t>(text.size()),
            "a span outside the text");
    Require(span.begin >= previous_begin, "spans out of order");
    previous_begin = span.begin;
  }
}

// `kept` is `all` cut to its first `count` ids.
bool IsPrefix(const std::vector<int32_t>& all, int64_t count, const int32_t* kept) {
  if (count < 0 || count > static_cast<int64_t>(all.size())) return false;
  for (int64_t i = 0; i < count; ++i) {
    if (kept[i] != all[i]) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool is_pair = (data[0] & 1) != 0;
  const PairTruncation rule = (data[0] & 2) != 0 ? PairTruncation::kSlowTokenizer : PairTruncation::kFastTokenizer;
  const int specials = is_pair ? SentencePieceTokenizer::kSpecialTokensPair : SentencePieceTokenizer::kSpecialTokensSingle;
  const int max_length = specials + data[1];  // 0..255 tokens of text: every cut is reachable
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 3), size - 3);
  const size_t split = bytes.size() * data[2] / 255;
  const absl::string_view text = is_pair ? bytes.substr(0, split) : bytes;
  std::optional<absl::string_view> pair;
  if (is_pair) pair = bytes.substr(split);

  const SentencePieceTokenizer& tokenizer = Tokenizer();
  const Encoding encoding = tokenizer.Encode(text, pair, max_length, rule);
  const std::vector<int32_t>& ids = encoding.input_ids;
  Require(static_cast<int>(ids.size()) <= max_length, "more ids than max_length");
  Require(encoding.attention_mask == std::vector<int32_t>(ids.size(), 1), "attention_mask not all ones");
  Require(ids.size() >= static_cast<size_t>(specials), "special tokens missing");
  Require(ids.front() == SentencePieceTokenizer::kBos && ids.back() == SentencePieceTokenizer::kEos, "not <s> ... </s>");

  const std::vector<int32_t> a = tokenizer.EncodeText(text);
  CheckTextIds(a, tokenizer);
  CheckSpans(text, a, tokenizer);
  const int64_t budget = max_length - specials;
  if (!is_pair) {
    const int64_t kept = static_cast<int64_t>(ids.size()) - specials;
    Require(kept == std::min<int64_t>(a.size(), budget), "single text not cut to min(length, budget)");
    Require(IsPrefix(a, kept, ids.data() + 1), "single text ids are not a prefix of the text's ids");
    return 0;
  }
  const std::vector<int32_t> b = tokenizer.EncodeText(*pair);
  CheckTextIds(b, tokenizer);
  const auto [keep_a, keep_b] = xlmr::models::PairKeepLengths(a.size(), b.size(), budget, rule);
  Require(keep_a + keep_b <= budget && keep_a <= static_cast<int64_t>(a.size()) &&
              keep_b <= static_cast<int64_t>(b.size()),
          "PairKeepLengths keeps more than fits or exists");
  Require(keep_a + keep_b == std::min<int64_t>(a.size() + b.size(), budget), "a pair cut wastes budget");
  Require(static_cast<int64_t>(ids.size()) == keep_a + keep_b + specials, "pair length");
  Require(IsPrefix(a, keep_a, ids.data() + 1), "first text ids are not a prefix of its ids");
  Require(ids[1 + keep_a] == SentencePieceTokenizer::kEos && ids[2 + keep_a] == SentencePieceTokenizer::kEos, "no </s></s> between the texts");
  Require(IsPrefix(b, keep_b, ids.data() + 3 + keep_a), "second text ids are not a prefix of its ids");
  return 0;
}
