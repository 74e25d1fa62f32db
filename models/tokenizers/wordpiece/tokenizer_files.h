// The files of a BERT tokenizer directory, as transformers' BertTokenizerFast.from_pretrained
// reads them when the directory has no tokenizer.json:
//   vocab.txt              one token per line, its id = its line number (from 0). Required.
//   tokenizer_config.json  optional; the keys read here (others are ignored):
//     do_lower_case          bool, default true
//     strip_accents          bool or null, default null: null strips accents exactly when
//                            do_lower_case does (tokenizers' BertNormalizer rule)
//     tokenize_chinese_chars bool, default true
//     unk_token, cls_token, sep_token, pad_token, mask_token
//                            a string or an AddedToken object {"content": ...}; defaults
//                            [UNK] [CLS] [SEP] [PAD] [MASK]
#ifndef XLMR_MODELS_TOKENIZERS_WORDPIECE_TOKENIZER_FILES_H_
#define XLMR_MODELS_TOKENIZERS_WORDPIECE_TOKENIZER_FILES_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace xlmr::models::bert {

struct SpecialTokens {
  std::string unk = "[UNK]";
  std::string cls = "[CLS]";
  std::string sep = "[SEP]";
  std::string pad = "[PAD]";
  std::string mask = "[MASK]";
};

struct TokenizerSettings {
  bool do_lower_case = true;
  bool strip_accents = true;  // resolved: the config's null already replaced by do_lower_case
  bool tokenize_chinese_chars = true;
  SpecialTokens special;
};

// Reads `directory`/tokenizer_config.json; an absent file gives the defaults.
// Errors name the file: unreadable, not a JSON object, or a key of the wrong type.
absl::StatusOr<TokenizerSettings> ReadTokenizerConfig(const std::string& directory);

// Reads `directory`/vocab.txt: token -> id, the id being the line number from 0, lines read as
// transformers' load_vocab reads them (Python text mode: "\n", "\r\n" and "\r" end a line;
// spaces belong to the token). A token listed twice keeps its last line's id, as there.
// Errors name the file: missing or unreadable, or empty.
absl::StatusOr<absl::flat_hash_map<std::string, int32_t>> ReadVocab(const std::string& directory);

}  // namespace xlmr::models::bert

#endif  // XLMR_MODELS_TOKENIZERS_WORDPIECE_TOKENIZER_FILES_H_
