// Evaluation metrics for regression (one predicted value per example), in double:
//   MeanSquaredError: mean of (prediction - label)^2 (sklearn mean_squared_error; what HF's
//     run_glue reports as "mse" for a regression task).
//   PearsonR: scipy.stats.pearsonr's statistic, sum(dx dy) / sqrt(sum dx^2 sum dy^2) about the
//     means, clipped to [-1, 1] as scipy clips it.
//   SpearmanRho: scipy.stats.spearmanr's statistic: Pearson's r of the ranks, tied values
//     sharing their average (1-based) rank (scipy.stats.rankdata(method="average")).
// Where scipy returns nan (fewer than two examples, or a constant input: zero variance, so
// the correlation is 0 / 0), these return nullopt; the caller reports no value rather than
// nan. Inputs must be finite (checked: predictions are checked for non-finite values before
// any metric, and labels come from the reader).
#ifndef XLMR_FRAMEWORK_TRAIN_REGRESSION_METRICS_H_
#define XLMR_FRAMEWORK_TRAIN_REGRESSION_METRICS_H_

#include <optional>
#include <vector>

namespace xlmr::train {

// Requires labels.size() == predictions.size() >= 1 (checked).
double MeanSquaredError(const std::vector<double>& labels, const std::vector<double>& predictions);

// Require x.size() == y.size() (checked); nullopt as described above.
std::optional<double> PearsonR(const std::vector<double>& x, const std::vector<double>& y);
std::optional<double> SpearmanRho(const std::vector<double>& x, const std::vector<double>& y);

// The 1-based ranks of `values`, ties sharing their average rank (scipy's rankdata).
std::vector<double> AverageRanks(const std::vector<double>& values);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_REGRESSION_METRICS_H_
