// Fuzz target: the tokenizer's model file (sentencepiece.bpe.model in a --model_dir, as
// untrusted as the directory's config.json and model.safetensors) on arbitrary bytes. Load must
// return an error or a tokenizer that encodes text; the parsing itself is Debian's
// libsentencepiece (protobuf), not built with the sanitizers' coverage, so this harness
// mutates mostly blind there and mainly guards our wall (sentencepiece_model.cc, tokenizer.cc)
// and the checks Load adds (reserved ids, vocabulary size).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = xlmr::fuzz::WriteInput("sentencepiece.bpe.model", data, size);
  // xlm-roberta-base's table: a loaded model must fit it.
  absl::StatusOr<xlmr::models::SentencePieceTokenizer> tokenizer = xlmr::models::SentencePieceTokenizer::Load(path, 250002);
  if (!tokenizer.ok()) return 0;
  (void)tokenizer->Encode("Voorgrondkleurnaam \xff\xfe ko\xc5\x84" "cowy", std::string("a pair"), 16);
  return 0;
}
