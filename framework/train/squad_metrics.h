// SQuAD's scores as Hugging Face's `evaluate` computes them: the official v1.1 script (metric
// "squad": exact_match, f1) and the v2.0 script (metric "squad_v2": exact, f1, total, HasAns_*,
// NoAns_*, best_exact(_thresh), best_f1(_thresh)). All figures are percentages except totals
// and thresholds.
//
// normalize_answer: lower case, remove ASCII punctuation (Python's string.punctuation),
// remove the words a, an, the (regex \b(a|an|the)\b), collapse whitespace. Python's lower() and
// \b know all of Unicode; here lower case covers ASCII, Latin-1, Latin Extended-A, Greek and
// Cyrillic (every script of the embedded data sets that has case), and a character counts as
// part of a word (for \b) when it is an ASCII letter, digit or '_', or any non-ASCII character
// outside the Latin-1 symbols (U+00A0-U+00BF, U+00D7, U+00F7), the general punctuation block
// (U+2000-U+206F) and CJK punctuation (U+3000-U+303F). Whitespace is Python's str.split()'s.
#ifndef XLMR_FRAMEWORK_TRAIN_SQUAD_METRICS_H_
#define XLMR_FRAMEWORK_TRAIN_SQUAD_METRICS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace xlmr::train {

std::string NormalizeAnswer(absl::string_view text);

// One question: the predicted text and the gold answers' texts (none: unanswerable).
struct SquadItem {
  std::string prediction;
  std::vector<std::string> answers;
  double no_answer_probability = 0;  // squad_v2 only; run_qa passes 0 for every question
};

struct SquadV1Scores {
  double exact_match = 0;
  double f1 = 0;
};

// evaluate's "squad". Requires at least one item, each with at least one answer.
SquadV1Scores ComputeSquadV1(const std::vector<SquadItem>& items);

struct SquadV2Scores {
  double exact = 0;
  double f1 = 0;
  int64_t total = 0;
  // Present when some (HasAns) or some (NoAns) questions have answers / have none.
  bool has_ans = false;
  double has_ans_exact = 0, has_ans_f1 = 0;
  int64_t has_ans_total = 0;
  bool no_ans = false;
  double no_ans_exact = 0, no_ans_f1 = 0;
  int64_t no_ans_total = 0;
  double best_exact = 0, best_exact_thresh = 0, best_f1 = 0, best_f1_thresh = 0;
};

// evaluate's "squad_v2" with its no_answer_threshold (default 1.0). Requires at least one item.
SquadV2Scores ComputeSquadV2(const std::vector<SquadItem>& items,
                             double no_answer_threshold = 1.0);

// The figures under evaluate's names and in its order, for metrics.jsonl and eval_results.json
// (each name gets the split's prefix there: "eval_exact_match"): squad: exact_match, f1;
// squad_v2: exact, f1, total, HasAns_exact, HasAns_f1, HasAns_total (when some question has an
// answer), NoAns_exact, NoAns_f1, NoAns_total (when some has none), best_exact,
// best_exact_thresh, best_f1, best_f1_thresh. Totals are counts (whole numbers).
std::vector<std::pair<std::string, double>> SquadV1Figures(const SquadV1Scores& scores);
std::vector<std::pair<std::string, double>> SquadV2Figures(const SquadV2Scores& scores);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_SQUAD_METRICS_H_
