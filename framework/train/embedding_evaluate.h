// Evaluation of sentence embeddings trained with in-batch negatives (Objective::kInBatchNegatives).
// The loss sentence-transformers' trainer reports as eval_loss: the data's rows (data::RowLayout)
// go in file order, in batches of EvalSettings::batch_size rows (each rank its contiguous slice of
// the rows), and each batch's MultipleNegativesRankingLoss uses that batch's own candidates, as
// the evaluation loop's batches do; the loss is the sum over every anchor over the anchors.
// The retrieval figures of an InformationRetrievalEvaluator built from the same rows
// (retrieval_metrics.h): the anchors are the queries, every distinct text of the other columns
// (the same token ids: one entry, in order of first appearance, column by column) the corpus,
// and a query's one relevant document its own positive. Cosine similarities are taken in double
// from the fp32 embeddings (sentence-transformers' in fp32: the rankings agree but for ties
// within fp32 rounding).
#ifndef XLMR_FRAMEWORK_TRAIN_EMBEDDING_EVALUATE_H_
#define XLMR_FRAMEWORK_TRAIN_EMBEDDING_EVALUATE_H_

#include <cstdint>

#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/train/evaluate.h"
#include "framework/train/model_interface.h"

namespace xlmr::train {

// [in] dataset: rows of `columns` texts, stored column by column; similarity_scale as trained.
EvalResult EvaluateInBatchNegatives(TrainableModel& model, const data::TokenizedDataset& dataset, int64_t columns,
                                    float similarity_scale, distributed::Communicator& comm,
                                    const EvalSettings& settings);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_EMBEDDING_EVALUATE_H_
