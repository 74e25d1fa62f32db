// Fuzz target: BertTokenizer (models/tokenizers/wordpiece/bert_tokenizer.h) on arbitrary bytes, as a user's
// TSV/CSV text reaches it (invalid UTF-8, NUL, control bytes; JSONL strings may hold any code
// point). The vocabularies are the golden test's (tests/models/tokenizers/wordpiece/testdata/{uncased,cased}),
// loaded once; the corpus test and tools/fuzz.sh both run from the workspace root, where those
// relative paths resolve.
//
// Input layout: byte 0 picks single text or pair (bit 0), the uncased or cased vocabulary
// (bit 1) and whether the text is also encoded as words split on spaces (bit 2); byte 1 the
// max_length; byte 2 where a pair is split; the rest is the text. Besides crashes and sanitizer
// reports, the harness aborts on any broken promise of bert_tokenizer.h: an id outside the
// vocabulary, a span outside the text or out of order, a wrong cut, wrong token types or
// word ids.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "models/tokenizers/wordpiece/bert_tokenizer.h"

namespace {

using xlmr::models::BertEncoding;
using xlmr::models::BertTokenizer;
using xlmr::models::TokenSpan;
using xlmr::models::WordEncoding;

const BertTokenizer& Load(const char* directory) {
  absl::StatusOr<BertTokenizer> loaded = BertTokenizer::Load(directory);
  if (!loaded.ok()) {
    std::fprintf(stderr, "bert_tokenizer_fuzzer: %s (run from the workspace root)\n",
                 std::string(loaded.status().message()).c_str());
    std::abort();
  }
  return *new BertTokenizer(std::move(*loaded));
}

const BertTokenizer& Tokenizer(bool cased) {
  static const BertTokenizer& uncased = Load("tests/models/tokenizers/wordpiece/testdata/uncased");
  static const BertTokenizer& cased_tokenizer = Load("tests/models/tokenizers/wordpiece/testdata/cased");
  return cased ? cased_tokenizer : uncased;
}

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "bert_tokenizer_fuzzer: broken promise: %s\n", what);
  std::abort();
}

void CheckIds(const std::vector<int32_t>& ids, const BertTokenizer& tokenizer) {
  for (int32_t id : ids) Require(id >= 0 && id < tokenizer.vocab_size(), "an id outside vocab.txt");
}

// EncodeTextWithOffsets: EncodeText's ids, one span each, inside the text, in text order. Two
// pieces may share characters (a Hangul syllable's jamo after NFD, or "i" and U+0307 from a
// lower-cased U+0130, can be split between pieces that both span the syllable), so the order is
// of begins and of ends, not of disjoint spans.
void CheckSpans(absl::string_view text, const std::vector<int32_t>& ids, const BertTokenizer& tokenizer) {
  std::vector<TokenSpan> spans;
  Require(tokenizer.EncodeTextWithOffsets(text, &spans) == ids, "EncodeTextWithOffsets ids differ from EncodeText");
  Require(spans.size() == ids.size(), "not one span per id");
  TokenSpan previous;
  for (const TokenSpan& span : spans) {
    Require(0 <= span.begin && span.begin < span.end && span.end <= static_cast<int64_t>(text.size()),
            "a span empty or outside the text");
    Require(span.begin >= previous.begin && span.end >= previous.end, "spans out of order");
    previous = span;
  }
}

bool IsPrefix(const std::vector<int32_t>& all, int64_t count, const int32_t* kept) {
  if (count < 0 || count > static_cast<int64_t>(all.size())) return false;
  return std::equal(all.begin(), all.begin() + count, kept);
}

void CheckWords(absl::string_view text, int max_length, const BertTokenizer& tokenizer) {
  const std::vector<std::string> words = absl::StrSplit(text, ' ');
  const WordEncoding e = tokenizer.EncodeWords(words, max_length);
  Require(e.input_ids.size() == e.word_ids.size(), "not one word id per token");
  Require(static_cast<int>(e.input_ids.size()) <= max_length, "more word tokens than max_length");
  Require(e.input_ids.front() == tokenizer.cls_id() && e.input_ids.back() == tokenizer.sep_id(),
          "words not [CLS] ... [SEP]");
  Require(e.word_ids.front() == -1 && e.word_ids.back() == -1, "a special token with a word id");
  CheckIds(e.input_ids, tokenizer);
  for (size_t i = 2; i + 1 < e.word_ids.size(); ++i) {
    Require(e.word_ids[i] >= e.word_ids[i - 1], "word ids go backwards");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool is_pair = (data[0] & 1) != 0;
  const BertTokenizer& tokenizer = Tokenizer((data[0] & 2) != 0);
  const int specials = is_pair ? BertTokenizer::kSpecialTokensPair : BertTokenizer::kSpecialTokensSingle;
  const int max_length = specials + data[1];  // 0..255 tokens of text: every cut is reachable
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 3), size - 3);
  const size_t split = bytes.size() * data[2] / 255;
  const absl::string_view text = is_pair ? bytes.substr(0, split) : bytes;
  std::optional<absl::string_view> pair;
  if (is_pair) pair = bytes.substr(split);
  if ((data[0] & 4) != 0) CheckWords(bytes, max_length, tokenizer);

  const BertEncoding e = tokenizer.EncodeWithTokenTypes(text, pair, max_length);
  const std::vector<int32_t>& ids = e.input_ids;
  Require(static_cast<int>(ids.size()) <= max_length, "more ids than max_length");
  Require(e.attention_mask == std::vector<int32_t>(ids.size(), 1), "attention_mask not all ones");
  Require(e.token_type_ids.size() == ids.size(), "not one token type per id");
  Require(ids.front() == tokenizer.cls_id() && ids.back() == tokenizer.sep_id(), "not [CLS] ... [SEP]");
  CheckIds(ids, tokenizer);

  const std::vector<int32_t> a = tokenizer.EncodeText(text);
  CheckSpans(text, a, tokenizer);
  const bool encoded_as_pair = pair.has_value() && !pair->empty();  // "" is no pair (HF)
  const int64_t budget = max_length - (encoded_as_pair ? BertTokenizer::kSpecialTokensPair
                                                       : BertTokenizer::kSpecialTokensSingle);
  if (!encoded_as_pair) {
    const int64_t kept = static_cast<int64_t>(ids.size()) - BertTokenizer::kSpecialTokensSingle;
    Require(kept == std::min<int64_t>(a.size(), budget), "single text not cut to min(length, budget)");
    Require(IsPrefix(a, kept, ids.data() + 1), "single text ids are not a prefix of the text's ids");
    Require(e.token_type_ids == std::vector<int32_t>(ids.size(), 0), "a single text with type 1");
    return 0;
  }
  const std::vector<int32_t> b = tokenizer.EncodeText(*pair);
  CheckSpans(*pair, b, tokenizer);
  const auto [keep_a, keep_b] = xlmr::models::PairKeepLengths(
      a.size(), b.size(), budget, xlmr::models::PairTruncation::kFastTokenizer);
  Require(static_cast<int64_t>(ids.size()) == keep_a + keep_b + BertTokenizer::kSpecialTokensPair, "pair length");
  Require(IsPrefix(a, keep_a, ids.data() + 1), "first text ids are not a prefix of its ids");
  Require(ids[1 + keep_a] == tokenizer.sep_id(), "no [SEP] after the first text");
  Require(IsPrefix(b, keep_b, ids.data() + 2 + keep_a), "second text ids are not a prefix of its ids");
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t expected = static_cast<int64_t>(i) < keep_a + 2 ? 0 : 1;
    Require(e.token_type_ids[i] == expected, "token types not 0 for [CLS] A [SEP], 1 for B [SEP]");
  }
  return 0;
}
