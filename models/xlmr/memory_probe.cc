// XlmrTaskModel::MeasurePassMemory: the probe behind the recompute planner's
// memory model (framework/recompute/memory_model.h). It runs the phases of one training
// micro-step (those of Forward and Backward, plus the task's loss that TrainStep runs in
// between) with a single encoder block, and reads after each phase how many activation bytes
// it allocated at its peak and left behind.
#include "framework/train/objective.h"
#include "models/xlmr/task_head.h"
#include "models/xlmr/model.h"

namespace xlmr::models {
namespace {

// Element-wise work per attention score: scale and mask, softmax (max, exp, normalise) and
// dropout, counted as one operation each.
constexpr int64_t kOpsPerAttentionScore = 5;

// Cost of recomputing the attention core: Q K^T and P V (2 FLOPs per multiply-add) plus the
// element-wise work on the [B,N,S,S] scores.
int64_t AttentionCoreFlops(const XlmrConfig& c, int64_t batch, int64_t seq) {
  const int64_t scores = batch * c.num_attention_heads * seq * seq;
  return 2 * 2 * batch * seq * seq * c.hidden_size + kOpsPerAttentionScore * scores;
}

// Cost of recomputing a whole block: its six matrix products plus the attention core.
int64_t BlockForwardFlops(const XlmrConfig& c, int64_t batch, int64_t seq) {
  const int64_t tokens = batch * seq;
  const int64_t projections = 4 * 2 * tokens * c.hidden_size * c.hidden_size;
  const int64_t feed_forward = 2 * 2 * tokens * c.hidden_size * c.intermediate_size;
  return projections + feed_forward + AttentionCoreFlops(c, batch, seq);
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

// A full-length batch (no padding) of token pad_id + 1 and label 0, as TrainStep would copy
// it to the device: ids and mask [B,S] i32, and the task's labels (train/objective.h): [B] i32,
// [B] f32 targets (regression), [B,S] i32 (per token) or [2,B] i32 (answer spans); all
// kActivations.
struct ProbeBatch {
  ModelInputs inputs;
  Tensor labels;
};

ProbeBatch MakeProbeBatch(const XlmrConfig& config, int64_t batch, int64_t seq, Device device) {
  Tensor ids = Tensor::Zeros({batch, seq}, DType::kI32);
  Tensor mask = Tensor::Zeros({batch, seq}, DType::kI32);
  for (int64_t i = 0; i < batch * seq; ++i) {
    ids.data<int32_t>()[i] = static_cast<int32_t>(config.pad_token_id + 1);
    mask.data<int32_t>()[i] = 1;
  }
  Tensor labels;
  switch (ObjectiveOf(config.task)) {
    case train::Objective::kPerToken: labels = Tensor::Zeros({batch, seq}, DType::kI32); break;
    case train::Objective::kSpanStartEnd: labels = Tensor::Zeros({2, batch}, DType::kI32); break;
    case train::Objective::kRegression: labels = Tensor::Zeros({batch}, DType::kF32); break;
    case train::Objective::kSingleLabel: labels = Tensor::Zeros({batch}, DType::kI32); break;
  }
  return ProbeBatch{ModelInputs{ids.ToDevice(device), mask.ToDevice(device)}, labels.ToDevice(device)};
}

}  // namespace

recompute::PassMemory XlmrTaskModel::MeasurePassMemory(
    int64_t batch_size, int64_t sequence_length, const PassContext& context) {
  XLMR_CHECK(context.training) << "the probe measures a training pass";
  XLMR_CHECK(batch_size > 0 && sequence_length > 0)
      << "probe shape [" << batch_size << ", " << sequence_length << "]";
  XLMR_CHECK(num_blocks() > 0);
  ReleaseActivations();
  ActivationMeter meter(store_.master().device());
  recompute::PassMemory pass;
  recompute::BlockMemory block;

  const int64_t before_inputs = meter.Held();
  ProbeBatch batch = MakeProbeBatch(config_, batch_size, sequence_length, store_.master().device());
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
  block.full_recompute_flops = BlockForwardFlops(config_, batch_size, sequence_length);
  block.selective_recompute_flops = AttentionCoreFlops(config_, batch_size, sequence_length);
  pass.blocks.assign(static_cast<size_t>(num_blocks()), block);
  return pass;
}

}  // namespace xlmr::models
