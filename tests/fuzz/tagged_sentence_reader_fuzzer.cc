// Fuzz target: the CoNLL and JSONL tagged-sentence readers on arbitrary bytes (the same bytes
// as each format), with and without required tags. The seed corpus also feeds the corpus test.
#include <cstddef>
#include <cstdint>

#include "framework/data/tagged_sentence_reader.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const xlmr::data::WordTagColumns columns;
  for (const char* name : {"data.conll", "data.jsonl"}) {
    const std::string path = xlmr::fuzz::WriteInput(name, data, size);
    for (const bool require_tags : {true, false}) {
      (void)xlmr::data::ReadTaggedSentences(path, columns, require_tags);
    }
  }
  return 0;
}
