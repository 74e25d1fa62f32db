// Extractive question-answering examples (SQuAD, XQuAD, MLQA, TyDiQA-GoldP), read as Hugging
// Face's run_qa.py reads them.
//
// Two formats, by extension:
//   .json   SQuAD v1.1 / v2.0: {"data": [{"paragraphs": [{"context": "...", "qas": [{"id": "...",
//           "question": "...", "answers": [{"text": "...", "answer_start": 12}, ...],
//           "is_impossible": false}]}]}]}. v2's "is_impossible" and "plausible_answers" are not
//           read: an unanswerable question is one with an empty "answers" list.
//   .jsonl  One example per line, the JSON-lines form of an HF dataset: {"id": "...",
//           "question": "...", "context": "...", "answers": {"text": [...], "answer_start":
//           [...]}}; blank lines are skipped. Other keys (title, ...) are ignored.
// answer_start counts characters (code points) of the context, as Python does. Every answer is
// checked: its answer_start must point at its text in the context (exactly, byte for byte).
//
// "answers" is required in training and evaluation files (QaAnswers::kRequired). Files to predict
// (xlmr_predict) may leave it out (kOptional): the example then has no gold answers
// (has_answers false) and can be answered but not scored.
//
// Errors (InvalidArgument, one line): "<file>:<line>: id '<id>': <what>" for JSON lines and
// "<file>: id '<id>': <what>" (or the JSON path where the id is not known yet) for SQuAD JSON:
// a missing or mistyped field, an answer_start outside the context or not pointing at its text,
// text and answer_start lists of different lengths, a duplicate id, no example at all.
#ifndef XLMR_FRAMEWORK_DATA_QA_EXAMPLE_READER_H_
#define XLMR_FRAMEWORK_DATA_QA_EXAMPLE_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace xlmr::data {

struct QaAnswer {
  std::string text;
  int64_t answer_start = 0;  // characters of the context, as in the file
  int64_t start_byte = 0;    // the same place in bytes of the UTF-8 context
};

struct QaExample {
  std::string id;
  std::string question;
  std::string context;
  std::vector<QaAnswer> answers;  // empty: unanswerable (SQuAD v2), or none given
  bool has_answers = true;        // the file gave "answers" (only kOptional leaves it false)
  std::string where;              // "<file>:<line>" or "<file>": for error messages
  int64_t line = 0;               // JSON lines: the example's 1-based line; SQuAD JSON: 0
};

// Whether an example must carry "answers".
enum class QaAnswers {
  kRequired,  // training and evaluation data: a missing "answers" is an error
  kOptional,  // data to predict: a missing "answers" means no gold answers (has_answers false);
              // a present one is read and checked as under kRequired
};

// Reads every example of `path` in file order.
absl::StatusOr<std::vector<QaExample>> ReadQaExamples(const std::string& path,
                                                      QaAnswers answers = QaAnswers::kRequired);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_QA_EXAMPLE_READER_H_
