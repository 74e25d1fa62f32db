// Letters and numbers that Unicode 15.1 and 16.0 added, for the byte-level pre-tokenizer.
//
// Hugging Face tokenizers runs GPT-2's pattern with Oniguruma, whose tables are Unicode 16.0;
// Debian bookworm's utf8proc 2.8 knows Unicode 15.0 and calls these code points unassigned
// (category Cn), so \p{L} and \p{N} would miss them (CJK Extension I, Garay, Kirat Rai, Sunuwar,
// Todhri, Tulu-Tigalari, Gurung Khema, Egyptian hieroglyphs extended-A, ...). The ranges are
// exactly the code points where tokenizers 0.23 and utf8proc 2.8 disagreed when every code
// point was compared (tests/models/tokenizers/byte_level_bpe/testdata/codepoint_classes.json, which
// tests/models/tokenizers/byte_level_bpe/roberta_tokenizer_test.cc checks again on every run).
#ifndef XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_NEWER_UNICODE_LETTERS_H_
#define XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_NEWER_UNICODE_LETTERS_H_

#include <cstdint>

#include "models/tokenizers/byte_level_bpe/byte_level_pre_tokenizer.h"

namespace xlmr::models::roberta {

// kLetter or kNumber for a code point that Unicode 15.1 or 16.0 assigned as a letter or number;
// kOther for any other code point. Meant for code points utf8proc reports unassigned: a newer
// utf8proc classifies these itself and never needs this table.
CharClass ClassifyNewerCodePoint(int32_t code_point);

}  // namespace xlmr::models::roberta

#endif  // XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_NEWER_UNICODE_LETTERS_H_
