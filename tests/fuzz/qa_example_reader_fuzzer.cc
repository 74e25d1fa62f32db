// Fuzz target: the question-answering example reader (SQuAD .json and JSON-lines .jsonl) on
// arbitrary bytes, the same bytes as each format, with "answers" required (training data) and
// optional (data to predict). Besides crashes and sanitizer reports, the
// harness aborts on a broken promise of ReadQaExamples (qa_example_reader.h): every answer it
// returns is found in its context at start_byte.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "framework/data/qa_example_reader.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using xlmr::data::QaAnswers;
  for (const char* name : {"data.json", "data.jsonl"}) {
    const std::string path = xlmr::fuzz::WriteInput(name, data, size);
    for (const QaAnswers rule : {QaAnswers::kRequired, QaAnswers::kOptional}) {
      const auto examples = xlmr::data::ReadQaExamples(path, rule);
      if (!examples.ok()) continue;
      for (const xlmr::data::QaExample& example : *examples) {
        for (const xlmr::data::QaAnswer& answer : example.answers) {
          const bool inside = answer.start_byte >= 0 &&
                              static_cast<size_t>(answer.start_byte) <= example.context.size();
          if (!inside || example.context.compare(answer.start_byte, answer.text.size(), answer.text) != 0) {
            std::fprintf(stderr, "qa_example_reader_fuzzer: broken promise: answer not at start_byte\n");
            std::abort();
          }
        }
        // Only kOptional leaves "answers" out, and then there are none.
        if (!example.has_answers && (rule == QaAnswers::kRequired || !example.answers.empty())) {
          std::fprintf(stderr, "qa_example_reader_fuzzer: broken promise: has_answers false wrongly\n");
          std::abort();
        }
      }
    }
  }
  return 0;
}
