#include "recipes/test_predictions.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "framework/core/status_macros.h"
#include "recipes/predict_writer.h"

namespace xlmr::recipes {

absl::StatusOr<std::vector<std::string>> WriteTestPredictions(train::TrainableModel& model,
                                                              const TestPredictionSource& source,
                                                              const std::string& directory) {
  const train::EvalSettings& settings = source.settings;
  std::vector<data::TaggedSentence> sentences;
  if (settings.objective == train::Objective::kPerToken) {
    XLMR_ASSIGN_OR_RETURN(sentences, data::ReadTaggedSentences(source.test_file, source.tagged_columns,
                                                               /*require_tags=*/false));
  }
  const int64_t rows = source.test->size();
  if (!sentences.empty() && static_cast<int64_t>(sentences.size()) != rows) {
    return absl::InternalError(absl::StrCat(source.test_file, ": ", sentences.size(), " sentences read again, ", rows,
                                            " evaluated"));
  }
  XLMR_ASSIGN_OR_RETURN(PredictionWriter writer,
                        PredictionWriter::Open(directory + "/" + kTestPredictionsFileName, source.id2label,
                                               settings.objective));
  // Batch by batch from the first row, as xlmr_predict does, so that both see the same batches.
  for (int64_t first = 0; first < rows; first += settings.batch_size) {
    const int64_t end = std::min(rows, first + settings.batch_size);
    const absl::Span<const data::TaggedSentence> batch_sentences =
        sentences.empty() ? absl::Span<const data::TaggedSentence>()
                          : absl::MakeConstSpan(sentences).subspan(first, end - first);
    XLMR_RETURN_IF_ERROR(writer.Write(train::Predict(model, *source.test, first, end, settings), batch_sentences));
  }
  XLMR_RETURN_IF_ERROR(writer.Commit());
  return std::vector<std::string>{kTestPredictionsFileName};
}

}  // namespace xlmr::recipes
