// Dtype table, UTF-8 validation and error helpers shared by the safetensors reader and writer.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "framework/io/safetensors.h"
#include "framework/io/safetensors_internal.h"

namespace xlmr::io {
namespace {

struct DtypeInfo {
  const char* name;
  int bits;
};

// In the order of the reference's `enum Dtype` ("MUST be in increasing alignment order"),
// which its writer sorts by; the index is the rank.
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 8},        {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},    {"F32", 32},    {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64},
};

// Length of the UTF-8 sequence that `lead` starts and the allowed range of its second byte
// (narrowed for E0/ED/F0/F4 to exclude overlong forms, surrogates and code points above
// U+10FFFF); length 0 when `lead` cannot start a sequence.
struct Utf8Lead {
  int length;
  uint8_t second_low;
  uint8_t second_high;
};

Utf8Lead ClassifyLead(uint8_t lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

}  // namespace

int SafetensorsDtypeRank(absl::string_view dtype) {
  for (int rank = 0; rank < static_cast<int>(sizeof(kDtypes) / sizeof(kDtypes[0])); ++rank) {
    if (dtype == kDtypes[rank].name) return rank;
  }
  return -1;
}

int SafetensorsDtypeBits(absl::string_view dtype) {
  const int rank = SafetensorsDtypeRank(dtype);
  return rank < 0 ? 0 : kDtypes[rank].bits;
}

size_t FirstInvalidUtf8Byte(absl::string_view text) {
  const auto byte = [&text](size_t i) { return static_cast<uint8_t>(text[i]); };
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Lead lead = ClassifyLead(byte(i));
    if (lead.length == 0 || text.size() - i < static_cast<size_t>(lead.length)) return i;
    if (lead.length > 1 && (byte(i + 1) < lead.second_low || byte(i + 1) > lead.second_high)) {
      return i;
    }
    for (int k = 2; k < lead.length; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return i;
    }
    i += lead.length;
  }
  return absl::string_view::npos;
}

absl::Status Invalid(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::Status InvalidTensor(const std::string& path, absl::string_view what,
                           absl::string_view tensor) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, " (tensor '", tensor, "')"));
}

}  // namespace xlmr::io
