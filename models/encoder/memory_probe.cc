// EncoderModel::MeasurePassMemory: the probe behind the recompute planner's
// memory model (framework/recompute/memory_model.h). It runs the phases of one training
// micro-step (those of Forward and Backward, plus the task's loss that TrainStep runs in
// between) with a single encoder block, and reads after each phase how many activation bytes
// it allocated at its peak and left behind.
#include <algorithm>
#include <vector>

#include "framework/data/collate.h"
#include "framework/train/model_inputs.h"
#include "framework/train/objective.h"
#include "models/encoder/task_head.h"
#include "models/encoder/model.h"

namespace xlmr::models {
namespace {

// The in-batch negatives' targets for a probe batch of `batch` sequences: pairs (anchor,
// positive) when the count is even, else one anchor with the rest as its candidates.
Tensor InBatchTargets(int64_t batch) {
  const int64_t anchors = batch % 2 == 0 ? batch / 2 : 1;
  Tensor targets = Tensor::Zeros({anchors}, DType::kI32);
  for (int64_t i = 0; i < anchors; ++i) targets.data<int32_t>()[i] = static_cast<int32_t>(i);
  return targets;
}

// Element-wise work per attention score: scale and mask, softmax (max, exp, normalise) and
// dropout, counted as one operation each.
constexpr int64_t kOpsPerAttentionScore = 5;

// The probe's sequence lengths: B rows of S (padded), or T split over B sequences as evenly as
// possible (packed; the first T mod B one token longer).
std::vector<int64_t> ProbeSequenceLengths(const recompute::BatchShape& shape) {
  if (!shape.packed()) return std::vector<int64_t>(static_cast<size_t>(shape.batch_size), shape.sequence_length);
  std::vector<int64_t> lengths(static_cast<size_t>(shape.batch_size), shape.packed_tokens / shape.batch_size);
  for (int64_t b = 0; b < shape.packed_tokens % shape.batch_size; ++b) ++lengths[static_cast<size_t>(b)];
  return lengths;
}

// Cost of recomputing the attention core: Q K^T and P V (2 FLOPs per multiply-add) plus the
// element-wise work on the scores, one [s, s] square per sequence and head.
int64_t AttentionCoreFlops(const EncoderConfig& c, const std::vector<int64_t>& lengths) {
  int64_t squares = 0;
  for (int64_t length : lengths) squares += length * length;
  return 2 * 2 * squares * c.hidden_size + kOpsPerAttentionScore * squares * c.num_attention_heads;
}

// Cost of recomputing a whole block: its six matrix products plus the attention core.
int64_t BlockForwardFlops(const EncoderConfig& c, const std::vector<int64_t>& lengths) {
  int64_t tokens = 0;
  for (int64_t length : lengths) tokens += length;
  const int64_t projections = 4 * 2 * tokens * c.hidden_size * c.hidden_size;
  const int64_t feed_forward = 2 * 2 * tokens * c.hidden_size * c.intermediate_size;
  return projections + feed_forward + AttentionCoreFlops(c, lengths);
}

// Activation bytes on one device: what is held now and the peak since the last Begin().
class ActivationMeter {
 public:
  explicit ActivationMeter(Device device) : stats_(MemoryStatsFor(device)) {}
  int64_t Held() const { return stats_.Of(MemoryCategory::kActivations).current; }
  int64_t Peak() const { return stats_.Of(MemoryCategory::kActivations).peak; }
  void Begin() { stats_.ResetPeaks(); }

 private:
  MemoryStats& stats_;
};

// A batch of `shape` (no padding) of token pad_id + 1 and label 0, copied to the device as
// TrainStep copies it (train::ToModelInputs). Padded ([B,S], every row full): ids and mask
// [B,S] i32. Packed: ids [T] i32 and `cu_seqlens` (ProbeCuSeqlens: host, where ToModelInputs
// leaves it). The task's labels (train/objective.h): [B] i32, [B] f32 targets (regression),
// per token [B,S] i32 padded or [T] i32 packed, [2,B] i32 (answer spans; padded only); all
// kActivations.
struct ProbeBatch {
  ModelInputs inputs;
  Tensor labels;
};

Tensor FilledI32(std::vector<int64_t> shape, int32_t value) {
  Tensor tensor = Tensor::Zeros(std::move(shape), DType::kI32);
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.data<int32_t>()[i] = value;
  return tensor;
}

// The host cu_seqlens [B + 1] i32 of a packed shape's `lengths` (ProbeSequenceLengths);
// undefined for a padded one. It is the host batch's (external bytes, not the probe's inputs).
Tensor ProbeCuSeqlens(const recompute::BatchShape& shape, const std::vector<int64_t>& lengths) {
  if (!shape.packed()) return Tensor();
  Tensor cu_seqlens = Tensor::Zeros({shape.batch_size + 1}, DType::kI32);
  for (size_t b = 0; b < lengths.size(); ++b) {
    cu_seqlens.data<int32_t>()[b + 1] = cu_seqlens.data<int32_t>()[b] + static_cast<int32_t>(lengths[b]);
  }
  return cu_seqlens;
}

ProbeBatch MakeProbeBatch(const EncoderConfig& config, const recompute::BatchShape& shape,
                          const std::vector<int64_t>& lengths, const Tensor& cu_seqlens, Device device) {
  const int64_t batch = shape.batch_size, seq = shape.sequence_length, tokens = shape.tokens();
  const int32_t token = static_cast<int32_t>(config.pad_token_id + 1);
  data::Batch host;  // what a collate would give for these lengths (the probe needs no labels)
  if (shape.packed()) {
    host.input_ids = FilledI32({tokens}, token);
    host.cu_seqlens = cu_seqlens;
    host.max_seqlen = *std::max_element(lengths.begin(), lengths.end());
  } else {
    host.input_ids = FilledI32({batch, seq}, token);
    host.attention_mask = FilledI32({batch, seq}, 1);
  }
  ModelInputs inputs = train::ToModelInputs(host, device);
  Tensor labels;
  switch (ObjectiveOf(config.task)) {
    case train::Objective::kPerToken:
      labels = shape.packed() ? Tensor::Zeros({tokens}, DType::kI32) : Tensor::Zeros({batch, seq}, DType::kI32);
      break;
    case train::Objective::kSpanStartEnd: labels = Tensor::Zeros({2, batch}, DType::kI32); break;
    case train::Objective::kRegression:
    case train::Objective::kBinaryLogits: labels = Tensor::Zeros({batch}, DType::kF32); break;
    case train::Objective::kSingleLabel: labels = Tensor::Zeros({batch}, DType::kI32); break;
    case train::Objective::kInBatchNegatives:
    case train::Objective::kSymmetricInBatchNegatives: labels = InBatchTargets(batch); break;
    // Never ObjectiveOf's: a sentence embedding is probed with in-batch negatives, whose [N, N]
    // scores bound CoSENT's [N] (the loss's memory is the same model's otherwise).
    case train::Objective::kScoredPairs: labels = Tensor::Zeros({batch / 2}, DType::kF32); break;
  }
  return ProbeBatch{std::move(inputs), labels.ToDevice(device)};
}

}  // namespace

recompute::PassMemory EncoderModel::MeasurePassMemory(const recompute::BatchShape& shape,
                                                       const PassContext& context) {
  XLMR_CHECK(context.training) << "the probe measures a training pass";
  XLMR_CHECK(shape.batch_size > 0 && shape.sequence_length > 0 && shape.packed_tokens >= 0)
      << "probe shape [" << shape.batch_size << ", " << shape.sequence_length << "], " << shape.packed_tokens
      << " packed tokens";
  XLMR_CHECK(!shape.packed() || (TakesPackedInputs(context.autocast) && shape.packed_tokens >= shape.batch_size &&
                                 shape.packed_tokens <= shape.batch_size * shape.sequence_length))
      << "packed probe of " << shape.packed_tokens << " tokens in " << shape.batch_size
      << " sequences of at most " << shape.sequence_length << " (this model takes packed inputs: "
      << TakesPackedInputs(context.autocast) << ")";
  XLMR_CHECK(num_blocks() > 0);
  ReleaseActivations();
  ActivationMeter meter(store_.master().device());
  recompute::PassMemory pass;
  recompute::BlockMemory block;

  const std::vector<int64_t> lengths = ProbeSequenceLengths(shape);
  const Tensor cu_seqlens = ProbeCuSeqlens(shape, lengths);  // before the count: the host batch's
  const int64_t before_inputs = meter.Held();
  ProbeBatch batch = MakeProbeBatch(config_, shape, lengths, cu_seqlens, store_.master().device());
  pass.inputs_bytes = meter.Held() - before_inputs;

  // Embeddings forward; its output is the block's input.
  const int64_t below_embeddings = meter.Held();
  meter.Begin();
  Tensor hidden = ForwardEmbeddings(batch.inputs, context);
  pass.embedding_forward_peak = meter.Peak() - below_embeddings;
  pass.embedding_resident_bytes = meter.Held() - below_embeddings - hidden.bytes();

  // Block forward: keep_bytes, then what kSelective keeps of it.
  block.input_bytes = hidden.bytes();
  const int64_t below_block = meter.Held() - hidden.bytes();
  meter.Begin();
  Tensor output = ForwardBlock(0, hidden, context);
  hidden = Tensor();  // still held as the block's saved input
  block.forward_peak = meter.Peak() - below_block;
  blocks_saved_[0].Retain(recompute::BlockRecompute::kKeep);
  block.selective_offered = blocks_saved_[0].attention_probs.defined();  // eager: an s^2 term
  block.keep_bytes = meter.Held() - below_block - output.bytes();
  blocks_saved_[0].Retain(recompute::BlockRecompute::kSelective);
  block.selective_bytes = meter.Held() - below_block - output.bytes();

  // Head forward, loss and its gradient (TrainStep's), head backward.
  const int64_t below_head = meter.Held() - output.bytes();
  meter.Begin();
  const Tensor logits = ForwardHead(output, context);
  output = Tensor();  // still held as the encoder output
  // The task's loss, run for its allocations (the value is unused).
  const train::Objective objective = ObjectiveOf(config_.task);
  train::ObjectiveLoss(objective, logits, batch.labels);
  const Tensor d_logits = train::ObjectiveBackward(objective, logits, batch.labels, 1.0f);
  Tensor d_hidden = BackwardHead(d_logits, context);
  pass.head_peak = meter.Peak() - below_head;
  pass.loss_resident_bytes = meter.Held() - below_head - d_hidden.bytes();

  // Block backward: the selective recompute, then the backward of the complete block.
  const int64_t below_block_backward = meter.Held() - d_hidden.bytes() - block.selective_bytes;
  meter.Begin();
  blocks_[0].Recompute(recompute::BlockRecompute::kSelective, tokens_, store_, context, &blocks_saved_[0]);
  block.selective_recompute_peak = meter.Peak() - below_block_backward - d_hidden.bytes();
  meter.Begin();
  d_hidden = BackwardBlock(0, recompute::BlockRecompute::kKeep, std::move(d_hidden), context);
  block.backward_peak = meter.Peak() - below_block_backward;

  // Embeddings backward.
  const int64_t below_embeddings_backward = meter.Held() - d_hidden.bytes();
  meter.Begin();
  BackwardEmbeddings(d_hidden, context);
  pass.embedding_backward_peak = meter.Peak() - below_embeddings_backward;

  ReleaseActivations();
  store_.ZeroGrads();
  block.full_recompute_flops = BlockForwardFlops(config_, lengths);
  block.selective_recompute_flops = AttentionCoreFlops(config_, lengths);
  pass.blocks.assign(static_cast<size_t>(num_blocks()), block);
  return pass;
}

}  // namespace xlmr::models
