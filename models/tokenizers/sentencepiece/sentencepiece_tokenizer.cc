#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "models/tokenizers/sentencepiece/piece_offsets.h"
#include "models/tokenizers/sentencepiece/sentencepiece_model.h"

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


}  // namespace

const SentencePieceIdMapping& SentencePieceIdMapping::XlmRoberta() {
  static const SentencePieceIdMapping* const mapping = new SentencePieceIdMapping{
      "XLM-R (fairseq)", {"<s>", "<pad>", "</s>", "<unk>"}, /*first_piece=*/3,
      /*unk_id=*/SentencePieceTokenizer::kUnk};
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

absl::StatusOr<SentencePieceTokenizer> SentencePieceTokenizer::Load(const std::string& sentencepiece_model_path,
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
  SentencePieceTokenizer tokenizer(std::move(model), mapping);
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

SentencePieceTokenizer::SentencePieceTokenizer(std::unique_ptr<internal::SentencePieceModel> model,
                             const SentencePieceIdMapping& mapping)
    : model_(std::move(model)), mapping_(mapping) {}
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

int64_t SentencePieceTokenizer::spm_size() const { return model_->PieceCount(); }

int32_t SentencePieceTokenizer::mask_id() const { return mapping_.PieceModelId(spm_size()); }

int32_t SentencePieceTokenizer::ToModelId(int spm_id) const {
  if (spm_id == 0) return mapping_.unk_id;
  // SentencePiece never emits its control pieces <s> (1) and </s> (2) for plain text.
  XLMR_CHECK(spm_id >= mapping_.first_piece) << "unexpected SentencePiece control id " << spm_id;
  return mapping_.PieceModelId(spm_id);
}

std::vector<int32_t> SentencePieceTokenizer::EncodeText(absl::string_view text) const {
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

std::vector<int32_t> SentencePieceTokenizer::EncodeTextWithOffsets(absl::string_view text,
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

Encoding SentencePieceTokenizer::Encode(absl::string_view text,
                                        std::optional<absl::string_view> pair, int max_length,
                                        PairTruncation rule) const {
  std::optional<std::vector<int32_t>> b;
  if (pair.has_value()) b = EncodeText(*pair);
  return AssembleRobertaStyle(EncodeText(text), b, max_length, bos_id_, eos_id_, rule);
}

WordEncoding SentencePieceTokenizer::EncodeWords(const std::vector<std::string>& words,
                                                 int max_length) const {
  return AssembleWords(words, max_length, bos_id_, eos_id_,
                       [this](absl::string_view word) { return EncodeText(word); });
}

}  // namespace xlmr::models
