// Evaluation metrics for single-label classification, computed as scikit-learn does:
// accuracy_score, f1_score(average="macro") and roc_auc_score (two classes only).
#ifndef XLMR_FRAMEWORK_TRAIN_CLASSIFICATION_METRICS_H_
#define XLMR_FRAMEWORK_TRAIN_CLASSIFICATION_METRICS_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace xlmr::train {

double Accuracy(const std::vector<int32_t>& labels, const std::vector<int32_t>& predictions);

// Mean over classes of F1 = 2TP / (2TP + FP + FN), over the classes that occur in `labels`
// or `predictions` (sklearn's default label set); a class with 2TP + FP + FN == 0 cannot
// occur in that set, and a class with TP == 0 scores 0 (sklearn's zero_division=0 result).
double MacroF1(const std::vector<int32_t>& labels, const std::vector<int32_t>& predictions);

// Area under the ROC curve of `scores` (probability of class 1) against labels in {0, 1};
// ties share their average rank (the Mann-Whitney form, identical to sklearn's trapezoids).
// nullopt when only one class is present (sklearn raises there).
std::optional<double> RocAuc(const std::vector<int32_t>& labels, const std::vector<double>& scores);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_CLASSIFICATION_METRICS_H_
