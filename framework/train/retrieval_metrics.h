// Information-retrieval figures as sentence-transformers' InformationRetrievalEvaluator computes
// them with its defaults (cosine similarity; accuracy@1,3,5,10, precision@ and recall@1,3,5,10,
// NDCG@10, MRR@10, MAP@100), under its names with the score function's prefix
// (cosine_accuracy@1, ..., cosine_ndcg@10 the primary figure). Each query's corpus is ranked by
// descending score, ties by ascending corpus index (its (-score, corpus_id) order); a query's
// relevant documents are a set of corpus indices. Means are taken as the evaluator takes them:
// accuracy and MRR as a running sum over the queries divided by their count, precision, recall,
// NDCG and MAP with numpy.mean's pairwise summation, so that the same ranking gives the same
// doubles.
#ifndef XLMR_FRAMEWORK_TRAIN_RETRIEVAL_METRICS_H_
#define XLMR_FRAMEWORK_TRAIN_RETRIEVAL_METRICS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xlmr::train {

// The figures' names in report order (the evaluator's dictionary order).
std::vector<std::string> RetrievalMetricNames();

// Cosine similarities [queries, corpus] (row-major) of `queries` [Q, width] and `corpus`
// [D, width] (row-major, any values): each row divided by max(norm, 1e-12), then dot products,
// in double.
std::vector<double> CosineScores(const std::vector<double>& queries, const std::vector<double>& corpus, int64_t width);
// The same similarity of row i of `a` with row i of `b` ([N, width] each): util.pairwise_cos_sim
// (EmbeddingSimilarityEvaluator's scored pairs).
std::vector<double> PairCosines(const std::vector<double>& a, const std::vector<double>& b, int64_t width);

// [in] scores: [queries, corpus] row-major similarities; top_k <= corpus.
// Returns each query's top_k corpus indices, best first, ties by ascending index.
std::vector<std::vector<int64_t>> RankCorpus(const std::vector<double>& scores, int64_t queries, int64_t corpus,
                                             int64_t top_k);

// [in] ranked: each query's ranking (at least 100 entries, or the whole corpus when smaller);
// relevant: each query's relevant corpus indices (non-empty). Returns RetrievalMetricNames()'s
// figures in that order.
std::vector<std::pair<std::string, double>> RetrievalMetrics(const std::vector<std::vector<int64_t>>& ranked,
                                                             const std::vector<std::vector<int64_t>>& relevant);

// numpy's pairwise summation of `values` (numpy.add.reduce over float64: 8 running sums in
// blocks of up to 128, halves above), divided by their count: numpy.mean to the last bit.
double NumpyMean(const std::vector<double>& values);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_RETRIEVAL_METRICS_H_
