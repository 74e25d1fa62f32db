// Evaluation metrics for token classification (NER), computed as seqeval 1.2 does by default
// (what Hugging Face's run_ner reports through evaluate's "seqeval" metric):
//   precision, recall, F1: entity level, micro-averaged over entity types:
//     seqeval.metrics.{precision,recall,f1}_score(y_true, y_pred) (mode=None, scheme=None);
//   accuracy: seqeval.metrics.accuracy_score, the fraction of words whose tags are equal.
//
// Entities are found exactly as seqeval's get_entities (suffix=False), conlleval's rules:
// the sentences are joined into one sequence with an "O" after each sentence, and each tag is
// read as a prefix (its first character) and a type (what follows the first '-' after that
// character, or the rest of the tag when there is no '-'; "_" when that is empty). An entity
// starts at a B or S; at an I or E after O, E or S (an I-X after O starts an entity, IOB1
// style); and at any tag other than O and "." whose type differs from the previous tag's. An
// entity ends after an E or S; before a B, S or O following a B or I; and before any change
// of type after a tag other than O and ".". Two entities match when type, first and last word
// are equal.
//
// Zero division (seqeval's default zero_division="warn" acts as 0, without the warning):
// precision is 0 when nothing is predicted, recall is 0 when there is no true entity, F1 is
// 0 when precision + recall is 0. F1 is 2 * precision * recall / (precision + recall) in
// double, the same operations as seqeval's (not 2 TP / (2 TP + FP + FN), which can differ in
// the last bit). Accuracy over no words at all is 0 (seqeval divides by zero).
#ifndef XLMR_FRAMEWORK_TRAIN_SEQUENCE_LABELING_METRICS_H_
#define XLMR_FRAMEWORK_TRAIN_SEQUENCE_LABELING_METRICS_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace xlmr::train {

struct SequenceLabelingScores {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  double accuracy = 0;
  int64_t true_entities = 0;       // seqeval's support
  int64_t predicted_entities = 0;
  int64_t correct_entities = 0;
};

// One entity: its type and its first and last position in the joined sequence (sentences
// concatenated, each followed by one "O" position).
struct Entity {
  std::string type;
  int64_t first = 0;
  int64_t last = 0;
  bool operator==(const Entity& other) const {
    return std::tie(type, first, last) == std::tie(other.type, other.first, other.last);
  }
};

// seqeval's get_entities on a list of sentences, in the order seqeval emits them (by end).
// Tags must be non-empty (seqeval fails on an empty tag; the caller's tags come from a file
// reader and a label map, which refuse empty ones: checked).
std::vector<Entity> GetEntities(const std::vector<std::vector<std::string>>& sentences);

// [in] true_tags, predicted_tags: per sentence, one tag per labelled word; the two must have
// the same number of sentences and the same length per sentence (checked: the caller builds
// both from the same examples).
SequenceLabelingScores ScoreSequenceLabeling(
    const std::vector<std::vector<std::string>>& true_tags,
    const std::vector<std::vector<std::string>>& predicted_tags);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_SEQUENCE_LABELING_METRICS_H_
