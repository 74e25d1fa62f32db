// The data of a fine-tuning run: the training, evaluation and test files tokenized with the
// model's tokenizer, and the label set of the training file, per task (FinetuneConfig::task):
//   sequence classification  text rows through the token cache; labels: the training file's;
//   regression               the same rows; labels read as numbers; one output, "LABEL_0";
//   token classification     tagged sentences (CoNLL or JSON lines), tokenized in memory with
//                            each word's tag on its first sub-token; labels: the training
//                            file's tags in run_ner's sorted order;
//   question answering       SQuAD .json or JSON lines, cut into run_qa's windows (one training
//                            example each, its answer span as labels); labels: LABEL_0 and
//                            LABEL_1 (HF's two outputs, start and end); the evaluation and
//                            test files keep their examples and windows for post-processing;
//   sentence embedding       rows of --embedding_columns' texts, each column through the token
//                            cache on its own, stored column by column (data::RowLayout); no
//                            labels (the base model keeps LABEL_0, LABEL_1).
#ifndef XLMR_RECIPES_FINETUNE_DATA_H_
#define XLMR_RECIPES_FINETUNE_DATA_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data/label_map.h"
#include "framework/data/qa_example_reader.h"
#include "framework/data/qa_features.h"
#include "framework/data/tokenized_dataset.h"
#include "models/tokenizers/text_tokenizer.h"
#include "recipes/finetune_flags.h"

namespace xlmr::recipes {

// A question-answering file's examples and their windows (eval[i] / test[i] is windows[i]).
struct QaSplit {
  std::vector<data::QaExample> examples;
  std::vector<data::QaFeature> windows;
};

struct FinetuneData {
  data::LabelMap labels;  // the model's outputs in id order (see above)
  data::TokenizedDataset train;
  std::optional<data::TokenizedDataset> eval;
  std::optional<data::TokenizedDataset> test;
  std::optional<QaSplit> qa_eval, qa_test;  // question answering only
};

// Reads (or finds in the cache) every data file of `config`; a label in the evaluation or
// test data that the training data lacks is an error naming the file, line and label. The
// cache's key covers `tokenizer_paths`' bytes and `tokenizer_cache_tag`
// (models::ModelTokenizer's files and cache_tag).
absl::StatusOr<FinetuneData> LoadFinetuneData(const FinetuneConfig& config,
                                              const models::TextTokenizer& tokenizer,
                                              const std::vector<std::string>& tokenizer_paths,
                                              const std::string& tokenizer_cache_tag);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_FINETUNE_DATA_H_
