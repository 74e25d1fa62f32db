#include "recipes/tokenize_fn.h"

namespace xlmr::recipes {

data::TokenizeFn MakeTokenizeFn(const models::TextTokenizer& tokenizer, int max_length) {
  return [&tokenizer, max_length](const std::string& text, const std::optional<std::string>& pair) {
    std::optional<absl::string_view> pair_view;
    if (pair.has_value()) pair_view = *pair;
    return tokenizer.Encode(text, pair_view, max_length).input_ids;
  };
}

data::TokenizeWordsFn MakeTokenizeWordsFn(const models::TextTokenizer& tokenizer, int max_length) {
  return [&tokenizer, max_length](const std::vector<std::string>& words) {
    models::WordEncoding encoding = tokenizer.EncodeWords(words, max_length);
    return data::WordTokens{std::move(encoding.input_ids), std::move(encoding.word_ids)};
  };
}

data::TokenizeWithSpansFn MakeTokenizeWithSpansFn(const models::TextTokenizer& tokenizer) {
  return [&tokenizer](const std::string& text, std::vector<data::TextSpan>* spans) {
    std::vector<models::TokenSpan> token_spans;
    std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &token_spans);
    spans->clear();
    spans->reserve(token_spans.size());
    for (const models::TokenSpan& span : token_spans) spans->push_back({span.begin, span.end});
    return ids;
  };
}

}  // namespace xlmr::recipes
