// What the recipes need of a model family's tokenizer (XLM-R's SentencePiece, RoBERTa's
// byte-level BPE), so that training, prediction and question answering encode text the same
// way whatever the family. models/model_tokenizer.h picks the implementation from config.json.
//
//   const TextTokenizer& tokenizer = ...;
//   Encoding e = tokenizer.Encode("premise", std::string("hypothesis"), /*max_length=*/128);
//
// The contract every implementation keeps (Hugging Face's fast tokenizer of the family):
// sequences start with bos_id() and end with eos_id(); a single text spends
// special_tokens_single() ids on special tokens, a pair special_tokens_pair(); ids are below the
// config's vocab_size (the loader checks); no padding here (the batcher pads on the right with
// the config's pad_token_id, which the loader checks equals pad_id()).
// Token types (BERT's token_type_ids) are not carried per encoding: a family whose model reads
// them names its separator (segment_separator_id), and the batcher gives every token after an
// example's first separator type 1 (data::Collate), which is what the tokenizer's own
// token_type_ids say for every text and pair it encodes (tested per tokenizer).
#ifndef XLMR_MODELS_TOKENIZERS_TEXT_TOKENIZER_H_
#define XLMR_MODELS_TOKENIZERS_TEXT_TOKENIZER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace xlmr::models {

// One tokenized example, before padding.
struct Encoding {
  std::vector<int32_t> input_ids;       // [seq_len], model ids, specials included
  std::vector<int32_t> attention_mask;  // [seq_len], all 1 (padding adds the zeros)
};

// The bytes [begin, end) of the encoded text that one token stands for.
struct TokenSpan {
  int64_t begin = 0;
  int64_t end = 0;
};

// One pre-split sentence (a list of words), tokenized word by word.
struct WordEncoding {
  std::vector<int32_t> input_ids;  // [seq_len], model ids, specials included
  std::vector<int32_t> word_ids;   // [seq_len], index of the token's word; -1 for special tokens
};

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;

  // Ids with special tokens for a text or a text pair, cut to at most `max_length` ids with
  // the fast tokenizer's `longest_first`. A present but empty `pair` is a pair with no tokens.
  // Requires max_length >= special_tokens_single() (single) or special_tokens_pair() (pair).
  virtual Encoding Encode(absl::string_view text, std::optional<absl::string_view> pair,
                          int max_length) const = 0;

  // Ids and word ids of a sentence given as words (HF's is_split_into_words=True,
  // truncation=True, max_length=max_length); words cut off or spelled with no token appear in
  // no word_ids. Requires max_length >= special_tokens_single().
  virtual WordEncoding EncodeWords(const std::vector<std::string>& words, int max_length) const = 0;

  // Ids of `text` without special tokens and, per id, the bytes of `text` it stands for (HF's
  // offset_mapping, in bytes where HF counts characters). `spans` must not be null.
  virtual std::vector<int32_t> EncodeTextWithOffsets(absl::string_view text,
                                                     std::vector<TokenSpan>* spans) const = 0;

  virtual int32_t bos_id() const = 0;  // <s>: the first id, the classification token
  virtual int32_t eos_id() const = 0;  // </s>: the last id, the separator
  virtual int32_t pad_id() const = 0;  // <pad>
  virtual int special_tokens_single() const = 0;  // special ids around a single text
  virtual int special_tokens_pair() const = 0;    // special ids around a text pair
  // The id ending a pair's first text when the model reads token types (BERT's [SEP]); -1 for
  // families whose token types are all 0 (XLM-R, RoBERTa: type_vocab_size 1).
  virtual int32_t segment_separator_id() const { return -1; }
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_TOKENIZERS_TEXT_TOKENIZER_H_
