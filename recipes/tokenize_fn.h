// The tokenizing function both recipes hand to the data layer (xlmr_finetune's token cache,
// xlmr_predict's input file), so that training and prediction encode text identically.
#ifndef XLMR_RECIPES_TOKENIZE_FN_H_
#define XLMR_RECIPES_TOKENIZE_FN_H_

#include "framework/data/qa_features.h"
#include "framework/data/token_cache.h"
#include "framework/data/word_labels.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::recipes {

// A text (or text pair) to model ids with special tokens, cut to `max_length` ids by
// `longest_first` with the fast tokenizer's pair rule (what AutoTokenizer gives HF users).
// `tokenizer` is borrowed: it must outlive the returned function.
// Requires max_length >= 3 (single texts) or 5 (pairs): the callers validate their flag.
data::TokenizeFn MakeTokenizeFn(const models::TextTokenizer& tokenizer, int max_length);

// A sentence's words to model ids with special tokens and each token's word (HF's
// is_split_into_words=True with truncation to `max_length`), for tagged data (word_labels.h).
data::TokenizeWordsFn MakeTokenizeWordsFn(const models::TextTokenizer& tokenizer, int max_length);

// A text to ids without special tokens and each id's bytes of the text (HF's offset_mapping),
// for question answering's windows (qa_features.h). `tokenizer` is borrowed, as above.
data::TokenizeWithSpansFn MakeTokenizeWithSpansFn(const models::TextTokenizer& tokenizer);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_TOKENIZE_FN_H_
