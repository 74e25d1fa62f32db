// Evaluation of sentence embeddings, as sentence-transformers' trainer and evaluators compute it.
//
// Trained with in-batch negatives (either direction set, framework/train/in_batch_negatives.h):
// eval_loss as sentence-transformers' trainer reports it: the data's rows (data::RowLayout) go in
// file order, in batches of EvalSettings::batch_size rows (each rank its contiguous slice of the
// rows), and each batch's MultipleNegativesRankingLoss uses that batch's own candidates, as the
// evaluation loop's batches do; the loss is the sum over every term over the terms.
// The retrieval figures of an InformationRetrievalEvaluator built from the same rows
// (retrieval_metrics.h): the anchors are the queries, every distinct text of the other columns
// (the same token ids: one entry, in order of first appearance, column by column) the corpus,
// and a query's one relevant document its own positive. Cosine similarities are taken in double
// from the fp32 embeddings (sentence-transformers' in fp32: the rankings agree but for ties
// within fp32 rounding).
//
// Trained on scored pairs (Objective::kScoredPairs, CoSENT): eval_loss is each batch's CoSENT loss
// weighted by its rows (the evaluation loop repeats a batch's loss once per row before the mean),
// and EmbeddingSimilarityEvaluator's figures with the model's cosine similarity: pearson_cosine
// and spearman_cosine, scipy's pearsonr and spearmanr of (scores, cosine of each pair's
// embeddings, in double); none when either side is constant (scipy's nan).
#ifndef XLMR_FRAMEWORK_TRAIN_EMBEDDING_EVALUATE_H_
#define XLMR_FRAMEWORK_TRAIN_EMBEDDING_EVALUATE_H_

#include <cstdint>

#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/train/evaluate.h"
#include "framework/train/in_batch_negatives.h"
#include "framework/train/model_interface.h"

namespace xlmr::train {

// [in] dataset: rows of `columns` texts, stored column by column; similarity_scale and
// directions as trained.
EvalResult EvaluateInBatchNegatives(TrainableModel& model, const data::TokenizedDataset& dataset, int64_t columns,
                                    float similarity_scale, Directions directions, distributed::Communicator& comm,
                                    const EvalSettings& settings);

// [in] dataset: rows of 2 texts, stored column by column, with their scores as targets
// (data::TokenizedDataset::AssignRegressionTargets); similarity_scale as trained.
EvalResult EvaluateScoredPairs(TrainableModel& model, const data::TokenizedDataset& dataset, float similarity_scale,
                               distributed::Communicator& comm, const EvalSettings& settings);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_EMBEDDING_EVALUATE_H_
