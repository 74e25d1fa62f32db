// Where a model family's network differs from XLM-R's, in one place. The encoder block is the
// same for every family; these are the differences the embeddings, the parameter names and the
// sequence head read (HF's modeling_bert.py against modeling_roberta.py):
//
//   family             prefix    positions                         token types  sequence head
//   xlm-roberta        roberta.  pad_id + 1 + index (fairseq)      all 0        dropout, dense, tanh,
//   roberta            roberta.  pad_id + 1 + index (fairseq)      all 0          dropout, out_proj
//   bert               bert.     index, from 0                     0 | 1        pooler (dense, tanh),
//                                                                                 dropout, classifier
#ifndef XLMR_MODELS_XLMR_FAMILY_ARCHITECTURE_H_
#define XLMR_MODELS_XLMR_FAMILY_ARCHITECTURE_H_

#include "models/xlmr/config.h"

namespace xlmr::models {

struct FamilyArchitecture {
  // The backbone's tensor names start with this and a dot ("roberta", "bert").
  const char* backbone_prefix;
  // RoBERTa numbers positions after the padding id and skips padding (position pad_id for a
  // padding token, whose embedding row gets no gradient); BERT numbers them 0, 1, ... for every
  // token, padding included, and every row of its table learns.
  bool positions_from_zero;
  // BERT's sequence head: the pooler (bert.pooler.dense, tanh) on the first token, then dropout
  // and one Linear `classifier`; the pooler belongs to the backbone (it is loaded from a
  // pretrained checkpoint that has one, freshly initialised otherwise, as HF does). RoBERTa's
  // head instead drops out the first token before its dense layer (classifier.dense,
  // classifier.out_proj).
  bool pooler;
};

const FamilyArchitecture& ArchitectureOf(ModelFamily family);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_FAMILY_ARCHITECTURE_H_
