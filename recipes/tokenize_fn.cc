#include "recipes/tokenize_fn.h"

namespace xlmr::recipes {

data::TokenizeFn MakeTokenizeFn(const models::XlmrTokenizer& tokenizer, int max_length) {
  return [&tokenizer, max_length](const std::string& text, const std::optional<std::string>& pair) {
    std::optional<absl::string_view> pair_view;
    if (pair.has_value()) pair_view = *pair;
    return tokenizer.Encode(text, pair_view, max_length).input_ids;
  };
}

}  // namespace xlmr::recipes
