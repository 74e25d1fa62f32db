// Fuzz target: RoBERTa's tokenizer (models/tokenizers/byte_level_bpe/roberta_tokenizer.h) on arbitrary bytes, as a
// user's TSV/CSV text reaches it (invalid UTF-8, NUL and control bytes included). The
// vocabularies are the test ones of tests/models/tokenizers/byte_level_bpe/testdata (byte-level BPE trained on the
// repo's text), loaded once; the corpus test and tools/fuzz.sh both run from the workspace root.
//
// Input layout: byte 0 picks the configuration (bit 0: add_prefix_space), the call (bit 1:
// Encode, else EncodeWords) and single text or pair (bit 2); byte 1 the max_length; byte 2 where
// a pair is split; the rest is the text (for EncodeWords cut into words at every U+0020, so
// empty words occur). Besides crashes and sanitizer reports, the harness aborts on any broken
// promise: an id outside the vocabulary or a special id from text, a span outside the text or
// out of order, a wrong cut, word ids that do not follow the words.
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
#include "models/tokenizers/byte_level_bpe/roberta_tokenizer.h"

namespace {

using xlmr::models::Encoding;
using xlmr::models::TokenSpan;
using xlmr::models::WordEncoding;
using xlmr::models::roberta::RobertaTokenizer;

const RobertaTokenizer& Load(const char* dir) {
  absl::StatusOr<RobertaTokenizer> loaded = RobertaTokenizer::Load(dir);
  if (!loaded.ok()) {
    std::fprintf(stderr, "roberta_tokenizer_fuzzer: %s (run from the workspace root)\n",
                 std::string(loaded.status().message()).c_str());
    std::abort();
  }
  return *new RobertaTokenizer(std::move(*loaded));
}

const RobertaTokenizer& Tokenizer(bool add_prefix_space) {
  static const RobertaTokenizer& plain = Load("tests/models/tokenizers/byte_level_bpe/testdata/bpe");
  static const RobertaTokenizer& prefix = Load("tests/models/tokenizers/byte_level_bpe/testdata/bpe_prefix_space");
  return add_prefix_space ? prefix : plain;
}

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "roberta_tokenizer_fuzzer: broken promise: %s\n", what);
  std::abort();
}

// Text ids are vocabulary ids that no special token has (every byte is spellable).
void CheckTextIds(const std::vector<int32_t>& ids, const RobertaTokenizer& t) {
  for (int32_t id : ids) {
    Require(id >= 0 && id < t.id_limit(), "an id outside the vocabulary");
    Require(id != t.bos_id() && id != t.pad_id() && id != t.eos_id() && id != t.unk_id() &&
                id != t.mask_id(),
            "a special id from plain text");
  }
}

void CheckSpans(absl::string_view text, const std::vector<int32_t>& ids,
                const RobertaTokenizer& t) {
  std::vector<TokenSpan> spans;
  Require(t.EncodeTextWithOffsets(text, &spans) == ids, "EncodeTextWithOffsets ids differ");
  Require(spans.size() == ids.size(), "not one span per id");
  int64_t previous_begin = 0;
  for (const TokenSpan& span : spans) {
    Require(0 <= span.begin && span.begin <= span.end &&
                span.end <= static_cast<int64_t>(text.size()),
            "a span outside the text");
    Require(span.begin >= previous_begin, "spans out of order");
    previous_begin = span.begin;
  }
  Require(text.empty() == ids.empty(), "a non-empty text without tokens, or the reverse");
}

bool IsPrefix(const std::vector<int32_t>& all, int64_t count, const int32_t* kept) {
  if (count < 0 || count > static_cast<int64_t>(all.size())) return false;
  return std::equal(all.begin(), all.begin() + count, kept);
}

void CheckEncode(absl::string_view bytes, bool is_pair, uint8_t split_byte, uint8_t length_byte,
                 const RobertaTokenizer& t) {
  const int specials =
      is_pair ? RobertaTokenizer::kSpecialTokensPair : RobertaTokenizer::kSpecialTokensSingle;
  const int max_length = specials + length_byte;
  const size_t split = bytes.size() * split_byte / 255;
  const absl::string_view text = is_pair ? bytes.substr(0, split) : bytes;
  std::optional<absl::string_view> pair;
  if (is_pair) pair = bytes.substr(split);

  const Encoding encoding = t.Encode(text, pair, max_length);
  const std::vector<int32_t>& ids = encoding.input_ids;
  Require(static_cast<int>(ids.size()) <= max_length, "more ids than max_length");
  Require(ids.size() >= static_cast<size_t>(specials), "special tokens missing");
  Require(ids.front() == t.bos_id() && ids.back() == t.eos_id(), "not <s> ... </s>");
  const std::vector<int32_t> a = t.EncodeText(text);
  CheckTextIds(a, t);
  CheckSpans(text, a, t);
  const int64_t budget = max_length - specials;
  if (!is_pair) {
    const int64_t kept = static_cast<int64_t>(ids.size()) - specials;
    Require(kept == std::min<int64_t>(a.size(), budget), "single text not cut to the budget");
    Require(IsPrefix(a, kept, ids.data() + 1), "single text ids are not a prefix");
    return;
  }
  const std::vector<int32_t> b = t.EncodeText(*pair);
  CheckTextIds(b, t);
  CheckSpans(*pair, b, t);
  const auto [keep_a, keep_b] = xlmr::models::PairKeepLengths(
      a.size(), b.size(), budget, xlmr::models::PairTruncation::kFastTokenizer);
  Require(static_cast<int64_t>(ids.size()) == keep_a + keep_b + specials, "pair length");
  Require(IsPrefix(a, keep_a, ids.data() + 1), "first text ids are not a prefix");
  Require(ids[1 + keep_a] == t.eos_id() && ids[2 + keep_a] == t.eos_id(), "no </s></s>");
  Require(IsPrefix(b, keep_b, ids.data() + 3 + keep_a), "second text ids are not a prefix");
}

void CheckWords(absl::string_view bytes, uint8_t length_byte, const RobertaTokenizer& t) {
  const int max_length = RobertaTokenizer::kSpecialTokensSingle + length_byte;
  const std::vector<std::string> words = absl::StrSplit(bytes, ' ');
  const WordEncoding encoding = t.EncodeWords(words, max_length);
  const std::vector<int32_t>& ids = encoding.input_ids;
  Require(ids.size() == encoding.word_ids.size(), "not one word id per id");
  Require(ids.size() >= 2 && static_cast<int>(ids.size()) <= max_length, "length");
  Require(ids.front() == t.bos_id() && ids.back() == t.eos_id(), "not <s> ... </s>");
  Require(encoding.word_ids.front() == -1 && encoding.word_ids.back() == -1, "specials' word id");
  // The ids between the specials are the words' own ids in order, cut on the right.
  std::vector<int32_t> all;
  std::vector<int32_t> all_word_ids;
  for (size_t w = 0; w < words.size(); ++w) {
    const std::vector<int32_t> word_ids = t.EncodeText(words[w]);
    CheckTextIds(word_ids, t);
    all.insert(all.end(), word_ids.begin(), word_ids.end());
    all_word_ids.insert(all_word_ids.end(), word_ids.size(), static_cast<int32_t>(w));
  }
  const int64_t kept = static_cast<int64_t>(ids.size()) - 2;
  Require(kept == std::min<int64_t>(all.size(), max_length - 2), "words not cut to the budget");
  Require(IsPrefix(all, kept, ids.data() + 1), "word ids are not the words' ids in order");
  Require(IsPrefix(all_word_ids, kept, encoding.word_ids.data() + 1), "word ids misnumbered");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool add_prefix_space = (data[0] & 1) != 0;
  const bool encode = (data[0] & 2) != 0;
  const bool is_pair = (data[0] & 4) != 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 3), size - 3);
  const RobertaTokenizer& tokenizer = Tokenizer(add_prefix_space);
  if (encode) {
    CheckEncode(bytes, is_pair, data[2], data[1], tokenizer);
  } else {
    CheckWords(bytes, data[1], tokenizer);
  }
  return 0;
}
