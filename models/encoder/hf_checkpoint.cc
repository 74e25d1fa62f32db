#include "models/encoder/hf_checkpoint.h"

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "framework/core/status_macros.h"
#include "framework/io/safetensors.h"
#include "models/families.h"
#include "models/encoder/init.h"

namespace xlmr::models {
namespace {

bool IsHeadTensor(const std::string& name) {
  return absl::StartsWith(name, "classifier.") || absl::StartsWith(name, "qa_outputs.");
}

// Copies `source` (f32 host) into parameter `index` of the store.
void CopyIntoParameter(const Tensor& source, ParameterStore& store, int index) {
  Tensor target = store.param(index);
  CopyBytes(target.raw_data(), target.device(), source.raw_data(), source.device(), source.bytes());
}

bool IsPoolerTensor(const std::string& canonical) { return absl::StrContains(canonical, ".pooler."); }

// Fills the model's parameters from `file`; head tensors only when `load_head`. BERT's pooler
// is optional both ways, as in HF: a checkpoint's pooler is ignored by a model without one
// (token classification, question answering), and a model's pooler missing from the checkpoint
// is left for InitializePooler (*pooler_loaded false).
absl::Status LoadTensors(const io::SafetensorsFile& file, bool load_head,
                         EncoderModel& model, bool* pooler_loaded) {
  ParameterStore& store = model.parameters();
  const ModelFamily& family = *model.config().family;
  std::set<int> loaded;
  for (const std::string& name : file.names()) {
    const std::string canonical =
        CanonicalTensorName(name, family, /*keep_pooler=*/!model.layout().pooler_parameters.empty());
    if (canonical.empty() || (IsHeadTensor(canonical) && !load_head)) continue;
    const int index = store.Find(canonical);
    if (index < 0 && IsPoolerTensor(canonical)) continue;
    if (index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.path(), ": tensor '", name, "' is not a parameter of ",
          ArchitectureName(family, model.config().task)));
    }
    const Shape& expected = store.spec(index).shape;
    if (file.Find(name)->shape != expected) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.path(), ": tensor '", name, "' has shape ", ShapeString(file.Find(name)->shape),
          ", config.json implies ", ShapeString(expected)));
    }
    XLMR_ASSIGN_OR_RETURN(Tensor value, io::ToTensor(file, name, Device::kCpu, MemoryCategory::kWorkspace));
    CopyIntoParameter(value, store, index);
    loaded.insert(index);
  }
  const std::vector<int>& pooler = model.layout().pooler_parameters;
  *pooler_loaded = !pooler.empty();
  for (int i : pooler) *pooler_loaded = *pooler_loaded && loaded.count(i) > 0;
  for (int i = 0; i < store.size(); ++i) {
    if (loaded.count(i) || (IsHeadTensor(store.spec(i).name) && !load_head)) continue;
    if (IsPoolerTensor(store.spec(i).name) && !*pooler_loaded) continue;
    return absl::InvalidArgumentError(
        absl::StrCat(file.path(), ": missing tensor '", store.spec(i).name, "'"));
  }
  return absl::OkStatus();
}

// True when the file holds every tensor of `model`'s head, and no other head tensor.
bool HasHead(const io::SafetensorsFile& file, const EncoderModel& model) {
  std::set<std::string> in_file;
  for (const std::string& name : file.names()) {
    const std::string canonical = CanonicalTensorName(name, *model.config().family);
    if (IsHeadTensor(canonical)) in_file.insert(canonical);
  }
  std::set<std::string> wanted;
  for (int i : model.layout().head_parameters) wanted.insert(model.parameters().spec(i).name);
  return in_file == wanted;
}

// Whether a checkpoint of task `b` holds the head of task `a`: the same task, or regression and a
// cross-encoder (the same class with one output).
bool SameHead(Task a, Task b) {
  const auto one_output = [](Task t) { return t == Task::kRegression || t == Task::kCrossEncoder; };
  return a == b || (one_output(a) && one_output(b));
}

// Applies --task to a directory's config: another task means another head (and, for
// regression, a single output).
void ApplyTask(EncoderConfig& config, Task task) {
  if (config.task == task) return;
  config.task = task;
  config.problem_type.reset();
  // A base model keeps the labels it was read with (HF's default two); they are not used.
  if (task == Task::kRegression || task == Task::kCrossEncoder) config.id2label = {"LABEL_0"};
  // XLMRobertaForQuestionAnswering's config: HF's default two labels.
  if (task == Task::kQuestionAnswering) config.id2label = {"LABEL_0", "LABEL_1"};
}

}  // namespace

std::string CanonicalTensorName(const std::string& name, const ModelFamily& family, bool keep_pooler) {
  // lm_head (RoBERTa's masked-LM head), cls (BERT's pre-training heads), the position_ids
  // buffer, and a pooler where the model has none (RoBERTa checkpoints carry one).
  if (absl::StartsWith(name, "lm_head.") || absl::StartsWith(name, "cls.") ||
      (absl::StrContains(name, "pooler.") && !family.pooler && !keep_pooler) ||
      absl::EndsWith(name, "position_ids")) {
    return "";
  }
  std::string canonical = name;
  if (absl::StartsWith(canonical, "embeddings.") || absl::StartsWith(canonical, "encoder.") ||
      absl::StartsWith(canonical, "pooler.")) {
    canonical = absl::StrCat(family.backbone_prefix, ".", canonical);
  }
  if (absl::StrContains(canonical, "LayerNorm.")) {
    canonical = absl::StrReplaceAll(canonical, {{"LayerNorm.gamma", "LayerNorm.weight"},
                                                {"LayerNorm.beta", "LayerNorm.bias"}});
  }
  return canonical;
}

std::string SavedTensorName(const EncoderConfig& config, const std::string& name) {
  const std::string prefix = absl::StrCat(config.family->backbone_prefix, ".");
  if (config.task == Task::kSentenceEmbedding && absl::StartsWith(name, prefix)) return name.substr(prefix.size());
  return name;
}

void OverrideDropout(EncoderConfig& config, double dropout) {
  config.hidden_dropout_prob = dropout;
  config.attention_probs_dropout_prob = dropout;
  config.classifier_dropout = dropout;
}

absl::StatusOr<LoadedModel> LoadPretrained(const std::string& model_dir, const LoadOptions& options) {
  XLMR_ASSIGN_OR_RETURN(EncoderConfig config, LoadEncoderConfig(model_dir + "/config.json"));
  if (options.dropout.has_value()) OverrideDropout(config, *options.dropout);
  config.attention = options.attention;
  config.pooling = options.pooling;
  config.normalize_embeddings = options.normalize_embeddings;
  XLMR_ASSIGN_OR_RETURN(io::SafetensorsFile file, io::ReadSafetensors(model_dir + "/model.safetensors"));
  const bool task_matches = !options.task.has_value() || SameHead(*options.task, config.task);
  if (options.task.has_value()) ApplyTask(config, *options.task);
  // One output, named as the directory names it.
  const bool regression = config.task == Task::kRegression || config.task == Task::kCrossEncoder;
  const bool labels_match =
      regression || !options.labels.has_value() || *options.labels == config.id2label;
  if (options.labels.has_value() && !regression) config.id2label = *options.labels;
  LoadedModel loaded;
  loaded.model = std::make_unique<EncoderModel>(std::move(config), options.device);
  loaded.fresh_head = !(task_matches && labels_match && HasHead(file, *loaded.model));
  bool pooler_loaded = false;
  XLMR_RETURN_IF_ERROR(LoadTensors(file, !loaded.fresh_head, *loaded.model, &pooler_loaded));
  if (loaded.fresh_head) InitializeHead(*loaded.model, options.seed);
  if (!pooler_loaded) InitializePooler(*loaded.model, options.seed);
  return loaded;
}

absl::Status SavePretrained(const EncoderModel& model, const std::string& output_dir) {
  std::error_code error;
  std::filesystem::create_directories(output_dir, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat(output_dir, ": cannot create directory: ", error.message()));
  }
  const ParameterStore& store = model.parameters();
  std::vector<io::NamedTensor> tensors;
  for (int i = 0; i < store.size(); ++i) tensors.push_back({SavedTensorName(model.config(), store.spec(i).name), store.param(i)});
  XLMR_RETURN_IF_ERROR(
      io::WriteSafetensors(output_dir + "/model.safetensors", tensors, {{"format", "pt"}}));
  return SaveEncoderConfig(model.config(), output_dir + "/config.json");
}

}  // namespace xlmr::models
