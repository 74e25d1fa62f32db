#include "models/xlmr/tokenizer.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "models/xlmr/piece_offsets.h"
#include "models/xlmr/sentencepiece_model.h"

namespace xlmr::models {
namespace {

// absl::string_view is its own class in Debian's Abseil; the wall takes std::string_view.
std::string_view ToStd(absl::string_view text) { return {text.data(), text.size()}; }

// The SentencePiece ids below mapping.first_piece must be <unk>, <s>, </s> in that order: the
// reserved block replaces exactly those pieces.
absl::Status CheckReplacedPieces(const internal::SentencePieceModel& model,
                                 const SentencePieceIdMapping& mapping, const std::string& path) {
  const int actual[] = {model.UnknownId(), model.BosId(), model.EosId()};
  for (int id = 0; id < mapping.first_piece; ++id) {
    if (actual[id] == id) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": SentencePiece ids of <unk>, <s>, </s> are ", actual[0], ", ", actual[1], ", ",
        actual[2], "; the ", mapping.family, " id mapping needs ",
        mapping.first_piece == 1 ? "<unk> at 0" : "0, 1, 2", " (spm_train's defaults)"));
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

const SentencePieceIdMapping& SentencePieceIdMapping::XlmRoberta() {
  static const SentencePieceIdMapping* const mapping = new SentencePieceIdMapping{
      "XLM-R (fairseq)", {"<s>", "<pad>", "</s>", "<unk>"}, /*first_piece=*/3,
      /*unk_id=*/XlmrTokenizer::kUnk};
  return *mapping;
}

const SentencePieceIdMapping& SentencePieceIdMapping::Camembert() {
  // "<unk>NOTUSED" stands where SentencePiece's own <unk> would have gone (id 0 + 4); the pieces
  // <s> and </s> keep their places after it, so they are not reserved here.
  static const SentencePieceIdMapping* const mapping = new SentencePieceIdMapping{
      "CamemBERT", {"<s>NOTUSED", "<pad>", "</s>NOTUSED", "<unk>", "<unk>NOTUSED"},
      /*first_piece=*/1, /*unk_id=*/3};
  return *mapping;
}

namespace {

// The model id HF gives the token spelled `token` (see SentencePieceIdMapping): a SentencePiece
// piece past the reserved block wins over a reserved spelling. nullopt when neither has it.
std::optional<int32_t> VocabularyId(const internal::SentencePieceModel& model,
                                    const SentencePieceIdMapping& mapping, const std::string& token) {
  const int spm_id = model.PieceId(token);
  if (spm_id >= mapping.first_piece) return mapping.PieceModelId(spm_id);
  const auto reserved = std::find(mapping.reserved.begin(), mapping.reserved.end(), token);
  if (reserved == mapping.reserved.end()) return std::nullopt;
  return static_cast<int32_t>(reserved - mapping.reserved.begin());
}

}  // namespace

absl::StatusOr<XlmrTokenizer> XlmrTokenizer::Load(const std::string& sentencepiece_model_path,
                                                  int64_t vocab_size,
                                                  const SentencePieceIdMapping& mapping) {
  std::string error;
  std::unique_ptr<internal::SentencePieceModel> model =
      internal::SentencePieceModel::Load(sentencepiece_model_path, &error);
  if (model == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        sentencepiece_model_path, ": cannot load SentencePiece model: ", error));
  }
  if (absl::Status status = CheckReplacedPieces(*model, mapping, sentencepiece_model_path);
      !status.ok()) {
    return status;
  }
  int32_t special_ids[3];
  const char* const special_tokens[3] = {"<s>", "</s>", "<pad>"};
  for (int i = 0; i < 3; ++i) {
    const std::optional<int32_t> id = VocabularyId(*model, mapping, special_tokens[i]);
    if (!id.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          sentencepiece_model_path, ": no piece ", special_tokens[i], "; the ", mapping.family,
          " id mapping takes it from the SentencePiece model"));
    }
    special_ids[i] = *id;
  }
  XlmrTokenizer tokenizer(std::move(model), mapping);
  tokenizer.bos_id_ = special_ids[0];
  tokenizer.eos_id_ = special_ids[1];
  tokenizer.pad_id_ = special_ids[2];
  const int64_t needed = static_cast<int64_t>(tokenizer.mask_id()) + 1;
  if (needed > vocab_size) {
    const bool xlmr_sized = needed == tokenizer.spm_size() + 2;
    return absl::InvalidArgumentError(absl::StrCat(
        sentencepiece_model_path, ": ", tokenizer.spm_size(), " pieces need vocab_size >= ",
        needed, " (pieces + ",
        xlmr_sized ? "<pad> + <mask>" : absl::StrCat(mapping.family, "'s reserved ids + <mask>"),
        "), but config vocab_size is ", vocab_size));
  }
  return tokenizer;
}

XlmrTokenizer::XlmrTokenizer(std::unique_ptr<internal::SentencePieceModel> model,
                             const SentencePieceIdMapping& mapping)
    : model_(std::move(model)), mapping_(mapping) {}
XlmrTokenizer::XlmrTokenizer(XlmrTokenizer&&) noexcept = default;
XlmrTokenizer& XlmrTokenizer::operator=(XlmrTokenizer&&) noexcept = default;
XlmrTokenizer::~XlmrTokenizer() = default;

int64_t XlmrTokenizer::spm_size() const { return model_->PieceCount(); }

int32_t XlmrTokenizer::mask_id() const { return mapping_.PieceModelId(spm_size()); }

int32_t XlmrTokenizer::ToModelId(int spm_id) const {
  if (spm_id == 0) return mapping_.unk_id;
  // SentencePiece never emits its control pieces <s> (1) and </s> (2) for plain text.
  XLMR_CHECK(spm_id >= mapping_.first_piece) << "unexpected SentencePiece control id " << spm_id;
  return mapping_.PieceModelId(spm_id);
}

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
  encoding.input_ids.push_back(bos_id_);
  if (!pair.has_value()) {
    AppendAll(a, std::min<int64_t>(a.size(), budget), &encoding.input_ids);
    encoding.input_ids.push_back(eos_id_);
  } else {
    const std::vector<int32_t> b = EncodeText(*pair);
    const auto [keep_a, keep_b] = PairKeepLengths(a.size(), b.size(), budget, rule);
    AppendAll(a, keep_a, &encoding.input_ids);
    encoding.input_ids.insert(encoding.input_ids.end(), {eos_id_, eos_id_});
    AppendAll(b, keep_b, &encoding.input_ids);
    encoding.input_ids.push_back(eos_id_);
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
  encoding.input_ids.push_back(bos_id_);
  encoding.word_ids.push_back(-1);
  for (size_t w = 0; w < words.size() && encoding.input_ids.size() - 1 < budget; ++w) {
    const std::vector<int32_t> pieces = EncodeText(words[w]);
    const size_t keep = std::min(pieces.size(), budget - (encoding.input_ids.size() - 1));
    AppendAll(pieces, static_cast<int64_t>(keep), &encoding.input_ids);
    encoding.word_ids.insert(encoding.word_ids.end(), keep, static_cast<int32_t>(w));
  }
  encoding.input_ids.push_back(eos_id_);
  encoding.word_ids.push_back(-1);
  return encoding;
}

}  // namespace xlmr::models
