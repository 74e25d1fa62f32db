#include "framework/train/embedding_evaluate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/data/column_collate.h"
#include "framework/train/in_batch_negatives.h"
#include "framework/train/model_inputs.h"
#include "framework/train/regression_metrics.h"
#include "framework/train/retrieval_metrics.h"
#include "framework/train/scored_pairs.h"

namespace xlmr::train {
namespace {

constexpr int64_t kTopK = 100;  // the deepest cut-off of the figures (MAP@100)

// The retrieval task of the rows: the anchors as queries; as corpus every distinct text (by
// token ids) of the other columns, in order of first appearance, column by column; a query's
// relevant document is its own positive.
struct RetrievalTask {
  std::vector<int64_t> corpus_examples;  // a corpus entry's example in the dataset
  std::vector<int64_t> positive_entry;   // per row: the corpus entry of its positive
};

RetrievalTask BuildRetrievalTask(const data::TokenizedDataset& dataset, const data::RowLayout& layout) {
  const int64_t rows = layout.Rows(dataset);
  RetrievalTask task;
  std::map<std::vector<int32_t>, int64_t> entry_of;
  task.positive_entry.resize(rows);
  for (int64_t column = 1; column < layout.columns; ++column) {
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t example = column * rows + row;
      const absl::Span<const int32_t> ids = dataset.example(example);
      const auto [it, added] =
          entry_of.emplace(std::vector<int32_t>(ids.begin(), ids.end()), static_cast<int64_t>(task.corpus_examples.size()));
      if (added) task.corpus_examples.push_back(example);
      if (column == 1) task.positive_entry[row] = it->second;
    }
  }
  return task;
}

std::vector<std::pair<std::string, double>> RetrievalFigures(const data::TokenizedDataset& dataset,
                                                             const data::RowLayout& layout,
                                                             const std::vector<double>& embeddings, int64_t width) {
  const RetrievalTask task = BuildRetrievalTask(dataset, layout);
  const int64_t rows = layout.Rows(dataset), corpus = static_cast<int64_t>(task.corpus_examples.size());
  const std::vector<double> queries(embeddings.begin(), embeddings.begin() + rows * width);
  std::vector<double> documents;
  for (int64_t example : task.corpus_examples) {
    documents.insert(documents.end(), embeddings.begin() + example * width, embeddings.begin() + (example + 1) * width);
  }
  const std::vector<double> scores = CosineScores(queries, documents, width);
  std::vector<std::vector<int64_t>> relevant;
  for (int64_t entry : task.positive_entry) relevant.push_back({entry});
  return RetrievalMetrics(RankCorpus(scores, rows, corpus, std::min(kTopK, corpus)), relevant);
}

// Every row's embeddings in file order (all ranks together) and the loss's totals, the rows in
// batches of settings.batch_size, each rank its contiguous slice.
struct EmbeddedRows {
  std::vector<double> embeddings;  // [columns][rows][width]
  int64_t width = 0;
  double loss_sum = 0;     // the batches' losses, each weighted as its objective is averaged
  double loss_weight = 0;  // what loss_sum is divided by for the mean
};

// batch_loss(embeddings [C*n, H], labels on the device) returns a batch's (sum, weight).
template <typename BatchLoss>
EmbeddedRows EmbedRows(TrainableModel& model, const data::TokenizedDataset& dataset, const data::RowLayout& layout,
                       distributed::Communicator& comm, const EvalSettings& settings, BatchLoss batch_loss) {
  const int64_t rows = layout.Rows(dataset), columns = layout.columns;
  const auto [begin, end] = RankSlice(rows, comm);
  PassContext context;
  context.autocast = settings.autocast;
  const bool packed = settings.padding_free && model.TakesPackedInputs(settings.autocast);
  double totals[2] = {0.0, 0.0};  // loss sum, weight
  // This rank's embeddings, column by column: [columns][its rows][width].
  std::vector<std::vector<double>> local(columns);
  for (int64_t first = begin; first < end; first += settings.batch_size) {
    std::vector<int64_t> batch_rows(std::min(settings.batch_size, end - first));
    std::iota(batch_rows.begin(), batch_rows.end(), first);
    const data::Batch batch =
        data::CollateRows(dataset, batch_rows, layout, packed, settings.pad_id, settings.segment_separator_id);
    const Tensor embeddings = model.Forward(ToModelInputs(batch, settings.device), context, /*keep_activations=*/false);
    const auto [sum, weight] = batch_loss(embeddings, batch.labels.ToDevice(settings.device));
    totals[0] += sum;
    totals[1] += weight;
    const std::vector<float> values = embeddings.ToFloatVector();
    const size_t per_column = batch_rows.size() * embeddings.dim(1);
    for (int64_t c = 0; c < columns; ++c) {
      local[c].insert(local[c].end(), values.begin() + c * per_column, values.begin() + (c + 1) * per_column);
    }
  }
  comm.AllReduceSumDoubles(totals, 2);
  // Every rank's rows in rank order make the file's order: the embeddings of all examples.
  EmbeddedRows result;
  for (int64_t c = 0; c < columns; ++c) {
    const std::vector<double> column = comm.AllGatherDoubles(local[c]);
    result.embeddings.insert(result.embeddings.end(), column.begin(), column.end());
  }
  result.width = rows > 0 ? static_cast<int64_t>(result.embeddings.size()) / (rows * columns) : 0;
  result.loss_sum = totals[0];
  result.loss_weight = totals[1];
  return result;
}

}  // namespace

EvalResult EvaluateInBatchNegatives(TrainableModel& model, const data::TokenizedDataset& dataset, int64_t columns,
                                    float similarity_scale, Directions directions, distributed::Communicator& comm,
                                    const EvalSettings& settings) {
  const data::RowLayout layout{columns};
  const EmbeddedRows embedded = EmbedRows(
      model, dataset, layout, comm, settings, [similarity_scale, directions](const Tensor& embeddings, const Tensor& labels) {
        const ops::LossSum loss = InBatchNegativesLoss(embeddings, labels, similarity_scale, directions);
        return std::pair<double, double>{loss.sum, static_cast<double>(loss.count)};  // a mean over the terms
      });
  EvalResult result;
  result.examples = layout.Rows(dataset);
  result.loss = embedded.loss_weight > 0 ? embedded.loss_sum / embedded.loss_weight : 0.0;
  if (embedded.width > 0) result.metrics = RetrievalFigures(dataset, layout, embedded.embeddings, embedded.width);
  return result;
}

EvalResult EvaluateScoredPairs(TrainableModel& model, const data::TokenizedDataset& dataset, float similarity_scale,
                               distributed::Communicator& comm, const EvalSettings& settings) {
  const data::RowLayout layout{2};
  const EmbeddedRows embedded =
      EmbedRows(model, dataset, layout, comm, settings, [similarity_scale](const Tensor& embeddings, const Tensor& labels) {
        // The evaluation loop repeats each batch's loss once per row before the mean.
        const double rows = static_cast<double>(labels.numel());
        return std::pair<double, double>{ScoredPairsLoss(embeddings, labels, similarity_scale).sum * rows, rows};
      });
  EvalResult result;
  const int64_t rows = layout.Rows(dataset);
  result.examples = rows;
  result.loss = embedded.loss_weight > 0 ? embedded.loss_sum / embedded.loss_weight : 0.0;
  if (embedded.width == 0) return result;
  std::vector<double> scores;
  for (int64_t row = 0; row < rows; ++row) scores.push_back(dataset.target(row));
  const auto second = embedded.embeddings.begin() + rows * embedded.width;  // columns: first texts, then second
  const std::vector<double> cosines = PairCosines(std::vector<double>(embedded.embeddings.begin(), second),
                                                  std::vector<double>(second, embedded.embeddings.end()),
                                                  embedded.width);
  const std::vector<std::string> names = ReportedMetricNames(Objective::kScoredPairs);
  // scipy's pearsonr(labels, scores) and spearmanr(labels, scores); none for a constant input.
  if (const std::optional<double> r = PearsonR(scores, cosines)) result.metrics.push_back({names[0], *r});
  if (const std::optional<double> rho = SpearmanRho(scores, cosines)) result.metrics.push_back({names[1], *rho});
  return result;
}

}  // namespace xlmr::train
