// Question-answering examples to model inputs, as Hugging Face's run_qa.py prepares them
// (prepare_train_features / prepare_validation_features): each example becomes one or more
// windows ("features")
//
//   <s> question </s></s> context[window] </s>
//
// where only the context is cut (truncation="only_second") and a long context is covered by
// overlapping windows (return_overflowing_tokens=True, stride=doc_stride): with room for `r`
// context tokens, window k holds context tokens [k (r - doc_stride), k (r - doc_stride) + r),
// the last window the first that reaches the context's end (tokenizers' Encoding::truncate).
// The question loses its leading whitespace first (run_qa's `q.lstrip()`).
//
// Training labels (run_qa's prepare_train_features), from the example's first answer: the
// tokens where it starts and ends when the window holds all of it; index 0 (<s>) for both when
// it does not, or when the example has no answer (SQuAD v2). One deliberate difference
// (docs/DECISIONS.md): when the answer starts in the window's last context token, run_qa's
// scan runs on through the special tokens after the context (their offsets are (0, 0)) and
// labels the window's last token (</s>, or the last padding token); here it is that context
// token.
#ifndef XLMR_FRAMEWORK_DATA_QA_FEATURES_H_
#define XLMR_FRAMEWORK_DATA_QA_FEATURES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data/qa_example_reader.h"

namespace xlmr::data {

// [begin, end) bytes of a text that a token stands for.
struct TextSpan {
  int64_t begin = 0;
  int64_t end = 0;
};

// A text to model ids without special tokens and each id's span of the text (the tokenizer's
// EncodeTextWithOffsets; recipes/ binds it).
using TokenizeWithSpansFn =
    std::function<std::vector<int32_t>(const std::string& text, std::vector<TextSpan>* spans)>;

struct QaFeatureOptions {
  int max_seq_length = 384;  // run_qa's default for this task
  int doc_stride = 128;
  // Model ids of the special tokens (the tokenizer's bos_id(), eos_id(): <s>, </s>; BERT's
  // [CLS], [SEP]).
  int32_t bos_id = 0;
  int32_t eos_id = 2;
  // eos ids between the question and the context: RoBERTa's pairs have two
  // (<s> q </s></s> c </s>), BERT's one ([CLS] q [SEP] c [SEP]). TextTokenizer's
  // special_tokens_pair() - 2.
  int pair_separators = 2;
};

struct QaFeature {
  int64_t example_index = 0;          // into the examples given
  std::vector<int32_t> input_ids;     // [seq_len], specials included, no padding
  std::vector<TextSpan> offsets;      // [seq_len]: spans of the context for context tokens
  std::vector<uint8_t> is_context;    // [seq_len]: 1 for this window's context tokens, else 0
                                      // (run_qa's validation features null every other offset)
  int32_t start_position = 0;         // training labels: token indices, 0 = no answer here
  int32_t end_position = 0;
};

// Every window of every example, examples in order and each example's windows left to right.
// Errors (InvalidArgument, one line naming the example's file, line and id): a context with no
// tokens, a question so long that the room left for the context (max_seq_length - 2 - pair_separators
// - its tokens) is not more than doc_stride when the context must be cut (tokenizers refuses it).
// Requires doc_stride >= 0 and max_seq_length > 4 (the flag checks say so first).
absl::StatusOr<std::vector<QaFeature>> PrepareQaFeatures(const std::vector<QaExample>& examples,
                                                         const TokenizeWithSpansFn& tokenize,
                                                         const QaFeatureOptions& options);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_QA_FEATURES_H_
