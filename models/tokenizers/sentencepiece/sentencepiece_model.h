// A thin wall around the SentencePiece library, private to this folder (use SentencePieceTokenizer).
//
// Why a separate translation unit: Debian's sentencepiece_processor.h (0.1.97) declares its own
// `namespace absl { using std::string_view; }`, while Debian's Abseil defines a distinct class
// `absl::string_view`; a file that includes both does not compile ("reference to string_view is
// ambiguous"). So only sentencepiece_model.cc includes the library header, this header includes
// neither library, and errors cross the wall as plain strings.
#ifndef XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_SENTENCEPIECE_MODEL_H_
#define XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_SENTENCEPIECE_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}  // namespace sentencepiece

namespace xlmr::models::internal {

// One piece of a segmentation, as SentencePiece reports it.
struct SentencePiece {
  int id = 0;
  std::string piece;   // the piece's normalized text, "▁" (U+2581) for a space; for an unknown
                       // piece the normalized characters it covers
  uint32_t begin = 0;  // [begin, end): the bytes of the ORIGINAL text the piece came from, as
  uint32_t end = 0;    // SentencePiece maps them back through its normalizer
};

// Owns one loaded SentencePiece model (.model protobuf file).
class SentencePieceModel {
 public:
  // Loads `path`. On failure returns nullptr and sets *error to the library's message.
  static std::unique_ptr<SentencePieceModel> Load(const std::string& path, std::string* error);

  ~SentencePieceModel();
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

  // Number of pieces, control and unknown pieces included (`len(sp_model)` in HF).
  int PieceCount() const;
  // The ids the model reserves for <unk>, <s>, </s> (-1 when a model has none).
  int UnknownId() const;
  int BosId() const;
  int EosId() const;
  // The id of the piece spelled exactly `piece` (e.g. "<s>"), or -1 when the model has none.
  int PieceId(const std::string& piece) const;

  // Normalizes and segments `text` (Viterbi for a unigram model) into SentencePiece ids.
  // Returns false and sets *error on a library error. Thread-compatible: const, no shared state.
  bool Encode(std::string_view text, std::vector<int>* ids, std::string* error) const;
  // The same segmentation with each piece's text and original byte span.
  bool EncodePieces(std::string_view text, std::vector<SentencePiece>* pieces,
                    std::string* error) const;

 private:
  explicit SentencePieceModel(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor);

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace xlmr::models::internal

#endif  // XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_SENTENCEPIECE_MODEL_H_
