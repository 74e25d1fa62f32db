#include "models/xlmr/tokenizer.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "models/xlmr/piece_offsets.h"
#include "models/xlmr/sentencepiece_model.h"

namespace xlmr::models {
namespace {

// fairseq put <s>, <pad>, </s>, <unk> at 0..3 and kept SentencePiece's order after them; the
// SentencePiece control pieces <unk>, <s>, </s> (ids 0..2) are replaced by that block.
constexpr int32_t kFairseqOffset = 1;

int32_t ToModelId(int spm_id) {
  if (spm_id == 0) return XlmrTokenizer::kUnk;
  // SentencePiece never emits its control pieces <s> (1) and </s> (2) for plain text.
  XLMR_CHECK(spm_id >= 3) << "unexpected SentencePiece control id " << spm_id;
  return static_cast<int32_t>(spm_id) + kFairseqOffset;
}

// absl::string_view is its own class in Debian's Abseil; the wall takes std::string_view.
std::string_view ToStd(absl::string_view text) { return {text.data(), text.size()}; }

absl::Status CheckReservedIds(const internal::SentencePieceModel& model, const std::string& path) {
  if (model.UnknownId() != 0 || model.BosId() != 1 || model.EosId() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": SentencePiece ids of <unk>, <s>, </s> are ", model.UnknownId(), ", ",
        model.BosId(), ", ", model.EosId(),
        "; the XLM-R (fairseq) id mapping needs 0, 1, 2 (spm_train's defaults)"));
  }
  return absl::OkStatus();
}

void AppendAll(const std::vector<int32_t>& ids, int64_t count, std::vector<int32_t>* out) {
  out->insert(out->end(), ids.begin(), ids.begin() + count);
}

}  // namespace

std::pair<int64_t, int64_t> PairKeepLengths(int64_t len_a, int64_t len_b, int64_t budget,
                                            PairTruncation rule) {
  XLMR_CHECK(len_a >= 0 && len_b >= 0 && budget >= 0)
      << "len_a " << len_a << ", len_b " << len_b << ", budget " << budget;
  if (len_a + len_b <= budget) return {len_a, len_b};
  const int64_t shorter = std::min(len_a, len_b);
  if (2 * shorter <= budget) {
    // Cutting the longer text alone is enough: it keeps what the shorter one leaves.
    return len_a <= len_b ? std::make_pair(len_a, budget - len_a)
                          : std::make_pair(budget - len_b, len_b);
  }
  // Both are cut to half the budget; the rules differ only in who gets an odd token.
  const int64_t floor_half = budget / 2;
  const int64_t ceil_half = budget - floor_half;
  if (rule == PairTruncation::kSlowTokenizer) return {ceil_half, floor_half};
  return len_a > len_b ? std::make_pair(ceil_half, floor_half)
                       : std::make_pair(floor_half, ceil_half);
}

absl::StatusOr<XlmrTokenizer> XlmrTokenizer::Load(const std::string& sentencepiece_model_path,
                                                  int64_t vocab_size) {
  std::string error;
  std::unique_ptr<internal::SentencePieceModel> model =
      internal::SentencePieceModel::Load(sentencepiece_model_path, &error);
  if (model == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        sentencepiece_model_path, ": cannot load SentencePiece model: ", error));
  }
  if (absl::Status status = CheckReservedIds(*model, sentencepiece_model_path); !status.ok()) {
    return status;
  }
  const int64_t needed = static_cast<int64_t>(model->PieceCount()) + 2;  // + <pad>, <mask>
  if (needed > vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        sentencepiece_model_path, ": ", model->PieceCount(), " pieces need vocab_size >= ",
        needed, " (pieces + <pad> + <mask>), but config vocab_size is ", vocab_size));
  }
  return XlmrTokenizer(std::move(model));
}

XlmrTokenizer::XlmrTokenizer(std::unique_ptr<internal::SentencePieceModel> model)
    : model_(std::move(model)) {}
XlmrTokenizer::XlmrTokenizer(XlmrTokenizer&&) noexcept = default;
XlmrTokenizer& XlmrTokenizer::operator=(XlmrTokenizer&&) noexcept = default;
XlmrTokenizer::~XlmrTokenizer() = default;

int64_t XlmrTokenizer::spm_size() const { return model_->PieceCount(); }

std::vector<int32_t> XlmrTokenizer::EncodeText(absl::string_view text) const {
  std::vector<int> spm_ids;
  std::string error;
  // A loaded model encodes any byte string (invalid UTF-8 becomes unknown pieces), so a failure
  // here is a library invariant broken, not bad input.
  XLMR_CHECK(model_->Encode(ToStd(text), &spm_ids, &error)) << "SentencePiece: " << error;
  std::vector<int32_t> ids;
  ids.reserve(spm_ids.size());
  for (int spm_id : spm_ids) ids.push_back(ToModelId(spm_id));
  return ids;
}

std::vector<int32_t> XlmrTokenizer::EncodeTextWithOffsets(absl::string_view text,
                                                          std::vector<TokenSpan>* spans) const {
  std::vector<internal::SentencePiece> pieces;
  std::string error;
  XLMR_CHECK(model_->EncodePieces(ToStd(text), &pieces, &error)) << "SentencePiece: " << error;
  // The normalized spelling of a piece of text: its pieces joined, without the dummy "▁"
  // SentencePiece puts in front.
  const internal::NormalizeFn normalize = [this](absl::string_view s) {
    std::vector<internal::SentencePiece> parts;
    std::string part_error;
    XLMR_CHECK(model_->EncodePieces(ToStd(s), &parts, &part_error))
        << "SentencePiece: " << part_error;
    std::string joined;
    for (const internal::SentencePiece& part : parts) joined += part.piece;
    constexpr std::string_view kMeta = "\xE2\x96\x81";
    if (joined.compare(0, kMeta.size(), kMeta) == 0) joined.erase(0, kMeta.size());
    return joined;
  };
  const std::vector<internal::ByteSpan> aligned = internal::AlignPieces(text, pieces, normalize);
  std::vector<int32_t> ids;
  ids.reserve(pieces.size());
  spans->clear();
  spans->reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    ids.push_back(ToModelId(pieces[i].id));
    spans->push_back({aligned[i].begin, aligned[i].end});
  }
  return ids;
}

Encoding XlmrTokenizer::Encode(absl::string_view text, std::optional<absl::string_view> pair,
                               int max_length, PairTruncation rule) const {
  const int specials = pair.has_value() ? kSpecialTokensPair : kSpecialTokensSingle;
  XLMR_CHECK(max_length >= specials) << "max_length " << max_length << " cannot hold the "
                                     << specials << " special tokens";
  const int64_t budget = max_length - specials;
  const std::vector<int32_t> a = EncodeText(text);
  Encoding encoding;
  encoding.input_ids.push_back(kBos);
  if (!pair.has_value()) {
    AppendAll(a, std::min<int64_t>(a.size(), budget), &encoding.input_ids);
    encoding.input_ids.push_back(kEos);
  } else {
    const std::vector<int32_t> b = EncodeText(*pair);
    const auto [keep_a, keep_b] = PairKeepLengths(a.size(), b.size(), budget, rule);
    AppendAll(a, keep_a, &encoding.input_ids);
    encoding.input_ids.insert(encoding.input_ids.end(), {kEos, kEos});
    AppendAll(b, keep_b, &encoding.input_ids);
    encoding.input_ids.push_back(kEos);
  }
  encoding.attention_mask.assign(encoding.input_ids.size(), 1);
  return encoding;
}

WordEncoding XlmrTokenizer::EncodeWords(const std::vector<std::string>& words,
                                        int max_length) const {
  XLMR_CHECK(max_length >= kSpecialTokensSingle)
      << "max_length " << max_length << " cannot hold the 2 special tokens";
  const size_t budget = static_cast<size_t>(max_length - kSpecialTokensSingle);
  WordEncoding encoding;
  encoding.input_ids.push_back(kBos);
  encoding.word_ids.push_back(-1);
  for (size_t w = 0; w < words.size() && encoding.input_ids.size() - 1 < budget; ++w) {
    const std::vector<int32_t> pieces = EncodeText(words[w]);
    const size_t keep = std::min(pieces.size(), budget - (encoding.input_ids.size() - 1));
    AppendAll(pieces, static_cast<int64_t>(keep), &encoding.input_ids);
    encoding.word_ids.insert(encoding.word_ids.end(), keep, static_cast<int32_t>(w));
  }
  encoding.input_ids.push_back(kEos);
  encoding.word_ids.push_back(-1);
  return encoding;
}

}  // namespace xlmr::models
