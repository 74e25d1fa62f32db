// The parameters of XLMRobertaForSequenceClassification or XLMRobertaForTokenClassification
// (EncoderConfig::task), named as Hugging Face names them, in the order their gradients are
// produced by backward: classifier head, last encoder block,
// ..., first block, embeddings. One gradient bucket per group, numbered in that order.
#ifndef XLMR_MODELS_ENCODER_PARAMETER_LAYOUT_H_
#define XLMR_MODELS_ENCODER_PARAMETER_LAYOUT_H_

#include <string>
#include <vector>

#include "framework/tensor/parameter_store.h"
#include "models/encoder/config.h"

namespace xlmr::models {

// Indices into the ParameterStore of one encoder block's parameters.
struct EncoderBlockParams {
  int query_weight, query_bias, key_weight, key_bias, value_weight, value_bias;
  int attention_output_weight, attention_output_bias;
  int attention_norm_weight, attention_norm_bias;
  int intermediate_weight, intermediate_bias;
  int output_weight, output_bias;
  int output_norm_weight, output_norm_bias;
};

struct EmbeddingParams {
  int word, position, token_type, norm_weight, norm_bias;
};

// The sequence head (classification and regression): XLMRobertaClassificationHead's
// classifier.dense and classifier.out_proj, or BERT's pooler (bert.pooler.dense, a backbone
// tensor: ModelFamily::pooler) and its Linear `classifier`.
struct HeadParams {
  int dense_weight = -1, dense_bias = -1, out_proj_weight = -1, out_proj_bias = -1;
};

// XLMRobertaForTokenClassification's head: one Linear `classifier` applied to every token.
struct TokenHeadParams {
  int weight = -1, bias = -1;
};

struct ParameterLayout {
  std::vector<ParameterSpec> specs;
  std::vector<EncoderBlockParams> blocks;  // blocks[i] is encoder layer i
  EmbeddingParams embeddings;
  HeadParams head;              // set for sequence classification and regression (sentence
                                // embedding: dense_* only, the base model's unread pooler)
  TokenHeadParams token_head;   // set for token classification
  TokenHeadParams qa_outputs;   // set for question answering: Linear `qa_outputs` (H -> 2)
  // Every parameter of the task's head, what a fresh head initialises (bucket HeadBucket()).
  // BERT's pooler is in the head's bucket but not here: it comes with the backbone.
  std::vector<int> head_parameters;
  // BERT's sequence head, and any family's sentence embedding (the base model's pooler, never
  // read): <backbone>.pooler.dense; else empty.
  std::vector<int> pooler_parameters;
};

ParameterLayout MakeParameterLayout(const EncoderConfig& config);

// Gradient bucket of the embeddings / of encoder block `layer` / of the head.
int HeadBucket();
int BlockBucket(const EncoderConfig& config, int layer);
int EmbeddingBucket(const EncoderConfig& config);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_PARAMETER_LAYOUT_H_
