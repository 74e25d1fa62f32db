#include "framework/train/embedding_evaluate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "framework/data/column_collate.h"
#include "framework/train/in_batch_negatives.h"
#include "framework/train/model_inputs.h"
#include "framework/train/retrieval_metrics.h"

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

}  // namespace

EvalResult EvaluateInBatchNegatives(TrainableModel& model, const data::TokenizedDataset& dataset, int64_t columns,
                                    float similarity_scale, distributed::Communicator& comm,
                                    const EvalSettings& settings) {
  const data::RowLayout layout{columns};
  const int64_t rows = layout.Rows(dataset);
  const auto [begin, end] = RankSlice(rows, comm);
  PassContext context;
  context.autocast = settings.autocast;
  const bool packed = settings.padding_free && model.TakesPackedInputs(settings.autocast);
  double totals[2] = {0.0, 0.0};  // loss sum, anchors
  // This rank's embeddings, column by column: [columns][its rows][width].
  std::vector<std::vector<double>> local(columns);
  for (int64_t first = begin; first < end; first += settings.batch_size) {
    std::vector<int64_t> batch_rows(std::min(settings.batch_size, end - first));
    std::iota(batch_rows.begin(), batch_rows.end(), first);
    const data::Batch batch =
        data::CollateRows(dataset, batch_rows, layout, packed, settings.pad_id, settings.segment_separator_id);
    const Tensor embeddings = model.Forward(ToModelInputs(batch, settings.device), context, /*keep_activations=*/false);
    const ops::LossSum loss =
        InBatchNegativesLoss(embeddings, batch.labels.ToDevice(settings.device), similarity_scale);
    totals[0] += loss.sum;
    totals[1] += static_cast<double>(loss.count);
    const std::vector<float> values = embeddings.ToFloatVector();
    const size_t per_column = batch_rows.size() * embeddings.dim(1);
    for (int64_t c = 0; c < columns; ++c) {
      local[c].insert(local[c].end(), values.begin() + c * per_column, values.begin() + (c + 1) * per_column);
    }
  }
  comm.AllReduceSumDoubles(totals, 2);
  // Every rank's rows in rank order make the file's order: the embeddings of all examples.
  std::vector<double> all;
  for (int64_t c = 0; c < columns; ++c) {
    const std::vector<double> column = comm.AllGatherDoubles(local[c]);
    all.insert(all.end(), column.begin(), column.end());
  }
  EvalResult result;
  result.examples = static_cast<int64_t>(totals[1]);
  result.loss = totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  const int64_t width = rows > 0 ? static_cast<int64_t>(all.size()) / (rows * columns) : 0;
  if (width > 0) result.metrics = RetrievalFigures(dataset, layout, all, width);
  return result;
}

}  // namespace xlmr::train
