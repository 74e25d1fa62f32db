#include "models/tokenizers/post_processing.h"

#include <algorithm>

#include "framework/core/check.h"

namespace xlmr::models {
namespace {

void AppendFirst(const std::vector<int32_t>& ids, int64_t count, std::vector<int32_t>* out) {
  out->insert(out->end(), ids.begin(), ids.begin() + count);
}

}  // namespace

std::pair<int64_t, int64_t> PairKeepLengths(int64_t len_a, int64_t len_b, int64_t budget,
                                            PairTruncation rule) {
  XLMR_CHECK(len_a >= 0 && len_b >= 0 && budget >= 0)
      << "len_a " << len_a << ", len_b " << len_b << ", budget " << budget;
  if (len_a + len_b <= budget) return {len_a, len_b};
  const int64_t shorter = std::min(len_a, len_b);
  if (2 * shorter <= budget) {
    // Cutting the longer text alone is enough: it keeps what the shorter one leaves.
    return len_a <= len_b ? std::make_pair(len_a, budget - len_a)
                          : std::make_pair(budget - len_b, len_b);
  }
  // Both are cut to half the budget; the rules differ only in who gets an odd token.
  const int64_t floor_half = budget / 2;
  const int64_t ceil_half = budget - floor_half;
  if (rule == PairTruncation::kSlowTokenizer) return {ceil_half, floor_half};
  return len_a > len_b ? std::make_pair(ceil_half, floor_half)
                       : std::make_pair(floor_half, ceil_half);
}

Encoding AssembleRobertaStyle(const std::vector<int32_t>& a,
                              const std::optional<std::vector<int32_t>>& b, int max_length,
                              int32_t bos, int32_t eos, PairTruncation rule) {
  const int specials = b.has_value() ? kRobertaStyleSpecialTokensPair : kRobertaStyleSpecialTokensSingle;
  XLMR_CHECK(max_length >= specials)
      << "max_length " << max_length << " cannot hold the " << specials << " special tokens";
  const int64_t budget = max_length - specials;
  Encoding encoding;
  encoding.input_ids.push_back(bos);
  if (!b.has_value()) {
    AppendFirst(a, std::min<int64_t>(static_cast<int64_t>(a.size()), budget), &encoding.input_ids);
    encoding.input_ids.push_back(eos);
  } else {
    const auto [keep_a, keep_b] = PairKeepLengths(static_cast<int64_t>(a.size()),
                                                  static_cast<int64_t>(b->size()), budget, rule);
    AppendFirst(a, keep_a, &encoding.input_ids);
    encoding.input_ids.insert(encoding.input_ids.end(), {eos, eos});
    AppendFirst(*b, keep_b, &encoding.input_ids);
    encoding.input_ids.push_back(eos);
  }
  encoding.attention_mask.assign(encoding.input_ids.size(), 1);
  return encoding;
}

WordEncoding AssembleWords(const std::vector<std::string>& words, int max_length, int32_t first,
                           int32_t last,
                           absl::FunctionRef<std::vector<int32_t>(absl::string_view)> encode_word) {
  XLMR_CHECK(max_length >= 2) << "max_length " << max_length
                              << " cannot hold the 2 special tokens";
  const size_t budget = static_cast<size_t>(max_length - 2);
  WordEncoding encoding;
  encoding.input_ids.push_back(first);
  encoding.word_ids.push_back(-1);
  for (size_t w = 0; w < words.size() && encoding.input_ids.size() - 1 < budget; ++w) {
    const std::vector<int32_t> ids = encode_word(words[w]);
    const size_t keep = std::min(ids.size(), budget - (encoding.input_ids.size() - 1));
    AppendFirst(ids, static_cast<int64_t>(keep), &encoding.input_ids);
    encoding.word_ids.insert(encoding.word_ids.end(), keep, static_cast<int32_t>(w));
  }
  encoding.input_ids.push_back(last);
  encoding.word_ids.push_back(-1);
  return encoding;
}

}  // namespace xlmr::models
