#include "models/tokenizers/byte_level_bpe/newer_unicode_letters.h"

#include <algorithm>
#include <iterator>

namespace xlmr::models::roberta {
namespace {

struct Range {
  int32_t first;
  int32_t last;  // inclusive
  CharClass cls;
};

// Sorted, disjoint: the code points of Unicode 16.0 in L* or N* that Unicode 15.0 left
// unassigned.
constexpr Range kNewerLettersAndNumbers[] = {
    {0x1C89, 0x1C8A, CharClass::kLetter},
    {0xA7CB, 0xA7CD, CharClass::kLetter},
    {0xA7DA, 0xA7DC, CharClass::kLetter},
    {0x105C0, 0x105F3, CharClass::kLetter},
    {0x10D40, 0x10D49, CharClass::kNumber},
    {0x10D4A, 0x10D65, CharClass::kLetter},
    {0x10D6F, 0x10D85, CharClass::kLetter},
    {0x10EC2, 0x10EC4, CharClass::kLetter},
    {0x11380, 0x11389, CharClass::kLetter},
    {0x1138B, 0x1138B, CharClass::kLetter},
    {0x1138E, 0x1138E, CharClass::kLetter},
    {0x11390, 0x113B5, CharClass::kLetter},
    {0x113B7, 0x113B7, CharClass::kLetter},
    {0x113D1, 0x113D1, CharClass::kLetter},
    {0x113D3, 0x113D3, CharClass::kLetter},
    {0x116D0, 0x116E3, CharClass::kNumber},
    {0x11BC0, 0x11BE0, CharClass::kLetter},
    {0x11BF0, 0x11BF9, CharClass::kNumber},
    {0x13460, 0x143FA, CharClass::kLetter},
    {0x16100, 0x1611D, CharClass::kLetter},
    {0x16130, 0x16139, CharClass::kNumber},
    {0x16D40, 0x16D6C, CharClass::kLetter},
    {0x16D70, 0x16D79, CharClass::kNumber},
    {0x18CFF, 0x18CFF, CharClass::kLetter},
    {0x1CCF0, 0x1CCF9, CharClass::kNumber},
    {0x1E5D0, 0x1E5ED, CharClass::kLetter},
    {0x1E5F0, 0x1E5F0, CharClass::kLetter},
    {0x1E5F1, 0x1E5FA, CharClass::kNumber},
    {0x2EBF0, 0x2EE5D, CharClass::kLetter},
};

}  // namespace

CharClass ClassifyNewerCodePoint(int32_t code_point) {
  const Range* end = std::end(kNewerLettersAndNumbers);
  const Range* range = std::upper_bound(
      std::begin(kNewerLettersAndNumbers), end, code_point,
      [](int32_t cp, const Range& r) { return cp < r.first; });
  if (range == std::begin(kNewerLettersAndNumbers)) return CharClass::kOther;
  --range;
  return code_point <= range->last ? range->cls : CharClass::kOther;
}

}  // namespace xlmr::models::roberta
