// Only file that includes sentencepiece_processor.h: it must not include any Abseil header
// (see sentencepiece_model.h for why).
#include "models/tokenizers/sentencepiece/sentencepiece_model.h"

#include <sentencepiece_processor.h>

#include <utility>

namespace xlmr::models::internal {

std::unique_ptr<SentencePieceModel> SentencePieceModel::Load(const std::string& path,
                                                             std::string* error) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const sentencepiece::util::Status status = processor->Load(path);
  if (!status.ok()) {
    *error = status.ToString();
    return nullptr;
  }
  return std::unique_ptr<SentencePieceModel>(new SentencePieceModel(std::move(processor)));
}

SentencePieceModel::SentencePieceModel(
    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor)
    : processor_(std::move(processor)) {}

SentencePieceModel::~SentencePieceModel() = default;

int SentencePieceModel::PieceCount() const { return processor_->GetPieceSize(); }
int SentencePieceModel::UnknownId() const { return processor_->unk_id(); }
int SentencePieceModel::BosId() const { return processor_->bos_id(); }
int SentencePieceModel::EosId() const { return processor_->eos_id(); }

int SentencePieceModel::PieceId(const std::string& piece) const {
  // PieceToId answers <unk>'s id for a piece the model lacks; only an exact spelling counts.
  const int id = processor_->PieceToId(piece);
  return processor_->IdToPiece(id) == piece ? id : -1;
}

bool SentencePieceModel::Encode(std::string_view text, std::vector<int>* ids,
                                std::string* error) const {
  const sentencepiece::util::Status status = processor_->Encode(text, ids);
  if (!status.ok()) {
    *error = status.ToString();
    return false;
  }
  return true;
}

bool SentencePieceModel::EncodePieces(std::string_view text, std::vector<SentencePiece>* pieces,
                                      std::string* error) const {
  sentencepiece::ImmutableSentencePieceText spt;
  const sentencepiece::util::Status status = processor_->Encode(text, spt.mutable_proto());
  if (!status.ok()) {
    *error = status.ToString();
    return false;
  }
  pieces->clear();
  pieces->reserve(spt.pieces_size());
  for (size_t i = 0; i < spt.pieces_size(); ++i) {
    const auto piece = spt.pieces(static_cast<int>(i));
    pieces->push_back({static_cast<int>(piece.id()), piece.piece(), piece.begin(), piece.end()});
  }
  return true;
}

}  // namespace xlmr::models::internal
