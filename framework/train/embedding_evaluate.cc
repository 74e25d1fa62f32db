#include "framework/train/embedding_evaluate.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "framework/data/column_collate.h"
#include "framework/train/in_batch_negatives.h"
#include "framework/train/model_inputs.h"

namespace xlmr::train {

EvalResult EvaluateInBatchNegatives(TrainableModel& model, const data::TokenizedDataset& dataset, int64_t columns,
                                    float similarity_scale, distributed::Communicator& comm,
                                    const EvalSettings& settings) {
  const data::RowLayout layout{columns};
  const auto [begin, end] = RankSlice(layout.Rows(dataset), comm);
  PassContext context;
  context.autocast = settings.autocast;
  const bool packed = settings.padding_free && model.TakesPackedInputs(settings.autocast);
  double totals[2] = {0.0, 0.0};  // loss sum, anchors
  for (int64_t first = begin; first < end; first += settings.batch_size) {
    std::vector<int64_t> rows(std::min(settings.batch_size, end - first));
    std::iota(rows.begin(), rows.end(), first);
    const data::Batch batch =
        data::CollateRows(dataset, rows, layout, packed, settings.pad_id, settings.segment_separator_id);
    const Tensor embeddings = model.Forward(ToModelInputs(batch, settings.device), context, /*keep_activations=*/false);
    const ops::LossSum loss =
        InBatchNegativesLoss(embeddings, batch.labels.ToDevice(settings.device), similarity_scale);
    totals[0] += loss.sum;
    totals[1] += static_cast<double>(loss.count);
  }
  comm.AllReduceSumDoubles(totals, 2);
  EvalResult result;
  result.examples = static_cast<int64_t>(totals[1]);
  result.loss = totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  return result;
}

}  // namespace xlmr::train
