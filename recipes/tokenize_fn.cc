#include "recipes/tokenize_fn.h"

namespace xlmr::recipes {

data::TokenizeFn MakeTokenizeFn(const models::XlmrTokenizer& tokenizer, int max_length) {
  return [&tokenizer, max_length](const std::string& text, const std::optional<std::string>& pair) {
    std::optional<absl::string_view> pair_view;
    if (pair.has_value()) pair_view = *pair;
    return tokenizer.Encode(text, pair_view, max_length).input_ids;
  };
}

data::TokenizeWordsFn MakeTokenizeWordsFn(const models::XlmrTokenizer& tokenizer, int max_length) {
  return [&tokenizer, max_length](const std::vector<std::string>& words) {
    models::WordEncoding encoding = tokenizer.EncodeWords(words, max_length);
    return data::WordTokens{std::move(encoding.input_ids), std::move(encoding.word_ids)};
  };
}

}  // namespace xlmr::recipes
