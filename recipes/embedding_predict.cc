#include "recipes/embedding_predict.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "framework/core/status_macros.h"
#include "framework/data/column_collate.h"
#include "framework/ops/row_normalize.h"
#include "framework/train/model_inputs.h"

namespace xlmr::recipes {

absl::Status WriteEmbeddings(models::EncoderModel& model, const data::TokenizedDataset& inputs,
                             const train::EvalSettings& settings, bool normalize, NpyMatrixWriter& output) {
  train::PassContext context;
  context.autocast = settings.autocast;
  const bool packed = settings.padding_free && model.TakesPackedInputs(settings.autocast);
  for (int64_t first = 0; first < inputs.size(); first += settings.batch_size) {
    std::vector<int64_t> rows(std::min(settings.batch_size, inputs.size() - first));
    std::iota(rows.begin(), rows.end(), first);
    const data::Batch batch = data::CollateRows(inputs, rows, data::RowLayout{}, packed, settings.pad_id,
                                                settings.segment_separator_id);
    Tensor embeddings = model.Forward(train::ToModelInputs(batch, settings.device), context, /*keep_activations=*/false);
    if (normalize) embeddings = ops::NormalizeRows(embeddings);
    XLMR_RETURN_IF_ERROR(output.Append(embeddings.ToFloatVector()));
  }
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
