#include "models/encoder/parameter_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "models/families.h"

namespace xlmr::models {
namespace {

// Appends one parameter and returns its index.
class LayoutBuilder {
 public:
  explicit LayoutBuilder(std::vector<ParameterSpec>* specs) : specs_(specs) {}
  int Add(std::string name, Shape shape, bool weight_decay, int bucket, bool read_in_half = false) {
    specs_->push_back({std::move(name), std::move(shape), weight_decay, bucket, read_in_half});
    return static_cast<int>(specs_->size()) - 1;
  }
  // A Linear layer's weight [out, in] (decayed) and bias [out] (not decayed).
  std::pair<int, int> AddLinear(const std::string& prefix, int64_t out, int64_t in, int bucket) {
    const int w = Add(prefix + ".weight", {out, in}, true, bucket, /*read_in_half=*/true);
    const int b = Add(prefix + ".bias", {out}, false, bucket, /*read_in_half=*/true);
    return {w, b};
  }
  // LayerNorm weight and bias: never decayed (HF Trainer excludes both).
  std::pair<int, int> AddNorm(const std::string& prefix, int64_t size, int bucket) {
    const int w = Add(prefix + ".weight", {size}, false, bucket);
    const int b = Add(prefix + ".bias", {size}, false, bucket);
    return {w, b};
  }

 private:
  std::vector<ParameterSpec>* specs_;
};

}  // namespace

int HeadBucket() { return 0; }
int BlockBucket(const EncoderConfig& config, int layer) {
  return 1 + (config.num_hidden_layers - 1 - layer);
}
int EmbeddingBucket(const EncoderConfig& config) { return 1 + config.num_hidden_layers; }

ParameterLayout MakeParameterLayout(const EncoderConfig& config) {
  ParameterLayout layout;
  LayoutBuilder add(&layout.specs);
  const std::string prefix = config.family->backbone_prefix;
  const int64_t h = config.hidden_size;
  const int64_t num_labels = static_cast<int64_t>(config.id2label.size());

  if (config.task == Task::kTokenClassification) {
    std::tie(layout.token_head.weight, layout.token_head.bias) =
        add.AddLinear("classifier", num_labels, h, HeadBucket());
  } else if (config.task == Task::kQuestionAnswering) {
    std::tie(layout.qa_outputs.weight, layout.qa_outputs.bias) =
        add.AddLinear("qa_outputs", num_labels, h, HeadBucket());
  } else if (config.task == Task::kSentenceEmbedding) {
    // The base model's pooler, which HF's XLMRobertaModel (and BertModel) has and
    // sentence-transformers saves, but which sentence embeddings never read: carried from the
    // checkpoint (or initialised as HF does) and back into the saved model unchanged; not decayed,
    // and its gradient stays zero, so AdamW leaves it as it is.
    layout.head.dense_weight = add.Add(prefix + ".pooler.dense.weight", {h, h}, false, HeadBucket());
    layout.head.dense_bias = add.Add(prefix + ".pooler.dense.bias", {h}, false, HeadBucket());
    layout.pooler_parameters = {layout.head.dense_weight, layout.head.dense_bias};
  } else if (config.family->pooler) {
    std::tie(layout.head.out_proj_weight, layout.head.out_proj_bias) =
        add.AddLinear("classifier", num_labels, h, HeadBucket());
    std::tie(layout.head.dense_weight, layout.head.dense_bias) =
        add.AddLinear(prefix + ".pooler.dense", h, h, HeadBucket());
    layout.pooler_parameters = {layout.head.dense_weight, layout.head.dense_bias};
  } else {
    std::tie(layout.head.dense_weight, layout.head.dense_bias) =
        add.AddLinear("classifier.dense", h, h, HeadBucket());
    std::tie(layout.head.out_proj_weight, layout.head.out_proj_bias) =
        add.AddLinear("classifier.out_proj", num_labels, h, HeadBucket());
  }
  const std::vector<int>& pooler = layout.pooler_parameters;
  for (int i = 0; i < static_cast<int>(layout.specs.size()); ++i) {
    if (std::find(pooler.begin(), pooler.end(), i) == pooler.end()) layout.head_parameters.push_back(i);
  }

  layout.blocks.resize(config.num_hidden_layers);
  for (int layer = config.num_hidden_layers - 1; layer >= 0; --layer) {
    const std::string p = absl::StrCat(prefix, ".encoder.layer.", layer);
    const int bucket = BlockBucket(config, layer);
    EncoderBlockParams& b = layout.blocks[layer];
    std::tie(b.query_weight, b.query_bias) = add.AddLinear(p + ".attention.self.query", h, h, bucket);
    std::tie(b.key_weight, b.key_bias) = add.AddLinear(p + ".attention.self.key", h, h, bucket);
    std::tie(b.value_weight, b.value_bias) = add.AddLinear(p + ".attention.self.value", h, h, bucket);
    std::tie(b.attention_output_weight, b.attention_output_bias) =
        add.AddLinear(p + ".attention.output.dense", h, h, bucket);
    std::tie(b.attention_norm_weight, b.attention_norm_bias) =
        add.AddNorm(p + ".attention.output.LayerNorm", h, bucket);
    std::tie(b.intermediate_weight, b.intermediate_bias) =
        add.AddLinear(p + ".intermediate.dense", config.intermediate_size, h, bucket);
    std::tie(b.output_weight, b.output_bias) =
        add.AddLinear(p + ".output.dense", h, config.intermediate_size, bucket);
    std::tie(b.output_norm_weight, b.output_norm_bias) =
        add.AddNorm(p + ".output.LayerNorm", h, bucket);
  }

  const int bucket = EmbeddingBucket(config);
  EmbeddingParams& e = layout.embeddings;
  // Embedding tables are decayed like weights (HF Trainer decays every non-bias, non-LayerNorm).
  e.word = add.Add(prefix + ".embeddings.word_embeddings.weight", {config.vocab_size, h}, true, bucket);
  e.position = add.Add(prefix + ".embeddings.position_embeddings.weight",
                       {config.max_position_embeddings, h}, true, bucket);
  e.token_type = add.Add(prefix + ".embeddings.token_type_embeddings.weight",
                         {config.type_vocab_size, h}, true, bucket);
  std::tie(e.norm_weight, e.norm_bias) = add.AddNorm(prefix + ".embeddings.LayerNorm", h, bucket);
  return layout;
}

}  // namespace xlmr::models
