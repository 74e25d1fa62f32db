// The activation memory of one training micro-step (forward, loss, backward) under a recompute
// plan, predicted from bytes measured once per batch shape.
//
// Every number is bytes of MemoryCategory::kActivations on the model's device, measured by a
// probe pass of the real model (EncoderModel::MeasurePassMemory), so they are
// exact for the measured batch shape, not estimates. The execution order the prediction
// follows is the model's:
//
//   embeddings forward, blocks 0..L-1 forward (each then keeps what its mode keeps), head
//   forward, loss, head backward, blocks L-1..0 backward (each first recomputes what its mode
//   dropped, then runs its backward and frees everything it kept), embeddings backward.
//
// With held(j) the bytes block j keeps between its forward and its backward, and
// prefix(i) = held(0) + ... + held(i-1), the peak of a plan is the largest of
//
//   external + inputs + embedding_forward_peak                          embeddings forward
//   forward_base + prefix(i) + forward_peak(i)                          block i forward
//   forward_base + prefix(L) + head_peak                                head, loss, head backward
//   backward_base + prefix(i) + max(recompute(i) + input_bytes(i),       block i recompute
//                                   backward_peak(i))                    and backward
//   backward_base + embedding_backward_peak                             embeddings backward
//
// where forward_base = external + inputs + embedding_resident, backward_base = forward_base +
// loss_resident, recompute(i) is 0 for kKeep, selective_recompute_peak for kSelective and
// forward_peak for kFull, and input_bytes(i) stands for the gradient of the block's output
// (same shape and dtype as its input) that is alive while the block is recomputed.
#ifndef XLMR_FRAMEWORK_RECOMPUTE_MEMORY_MODEL_H_
#define XLMR_FRAMEWORK_RECOMPUTE_MEMORY_MODEL_H_

#include <cstdint>
#include <vector>

#include "framework/recompute/recompute_plan.h"

namespace xlmr::recompute {

// The micro-batch shape a probe measures. Padded: B rows of S tokens each, every row full
// length (the padded path's worst case). Packed (--padding_free): B sequences holding T real
// tokens in all, none longer than S; the memory of a packed pass is a function of T and B,
// not of how T splits into sequences (attention is fused: per-token statistics, no
// [seq, seq] term), so one probe serves every micro-batch of T tokens.
struct BatchShape {
  int64_t batch_size = 0;       // B
  int64_t sequence_length = 0;  // S
  int64_t packed_tokens = 0;    // T; 0: a padded batch
  bool packed() const { return packed_tokens > 0; }
  int64_t tokens() const { return packed() ? packed_tokens : batch_size * sequence_length; }
};

// One encoder block at the measured batch shape.
struct BlockMemory {
  // The block's input [B,S,H]; also the size of its output and of its output's gradient.
  // What a kFull block keeps.
  int64_t input_bytes = 0;
  int64_t selective_bytes = 0;  // kept by a kSelective block (its input included)
  // Whether the planner offers kSelective for this block: only when the attention core holds
  // an s^2 term to drop (eager attention's probabilities). Fused attention keeps none, so
  // kSelective would recompute the attention forward to drop a few [B,S,H]-sized tensors.
  bool selective_offered = true;
  int64_t keep_bytes = 0;       // kept by a kKeep block (its input included)
  // Peak of its forward above what earlier blocks keep: its input plus everything the forward
  // allocates, its output included. A kFull recompute runs the same forward.
  int64_t forward_peak = 0;
  // Peak of the selective recompute above what earlier blocks keep, the gradient of its output
  // not included: selective_bytes plus what the recompute allocates.
  int64_t selective_recompute_peak = 0;
  // Peak of its backward above what earlier blocks keep: keep_bytes, the gradient of its
  // output, and the backward's temporaries (the gradient of its input included).
  int64_t backward_peak = 0;
  // Recompute cost: floating-point operations of the recomputed part.
  int64_t full_recompute_flops = 0;       // the whole forward
  int64_t selective_recompute_flops = 0;  // the attention core
};

// One training micro-step at the measured batch shape.
struct PassMemory {
  // Held by the caller throughout the step (on CPU, the host copies of the accumulation
  // window's batches); not measured by the probe, added by whoever knows it.
  int64_t external_bytes = 0;
  int64_t inputs_bytes = 0;  // the model inputs and labels on the device
  // Peak of the embeddings' forward above external + inputs, the encoder input included.
  int64_t embedding_forward_peak = 0;
  int64_t embedding_resident_bytes = 0;  // what the embeddings keep for their backward
  // Peak from the head's forward to the end of its backward above what the embeddings and
  // blocks keep: the encoder output, the head, the loss and its gradient, d(encoder output).
  int64_t head_peak = 0;
  // Held from the loss to the end of the step (logits and their gradient).
  int64_t loss_resident_bytes = 0;
  // Peak of the embeddings' backward above backward_base: the gradient of the encoder input
  // plus the backward's temporaries.
  int64_t embedding_backward_peak = 0;
  std::vector<BlockMemory> blocks;  // first block first

  int num_blocks() const { return static_cast<int>(blocks.size()); }
};

// Whether a planner may choose `mode` for `block` (kSelective only where it is offered).
bool ModeOffered(const BlockMemory& block, BlockRecompute mode);

// What `mode` keeps of `block` between its forward and its backward.
int64_t HeldBytes(const BlockMemory& block, BlockRecompute mode);
// The cost of recomputing `block` under `mode` (0 for kKeep).
int64_t RecomputeFlops(const BlockMemory& block, BlockRecompute mode);

// Bytes held below every block phase of the forward / backward (see the formula above).
int64_t ForwardBase(const PassMemory& memory);
int64_t BackwardBase(const PassMemory& memory);

// The larger of block `index`'s forward and backward phase peaks (recompute included) when
// the blocks before it keep `held_before` bytes.
int64_t BlockPhasesPeak(const PassMemory& memory, int index, BlockRecompute mode,
                        int64_t held_before);
// The head phase's peak when the blocks keep `held_by_blocks` bytes in all.
int64_t HeadPhasePeak(const PassMemory& memory, int64_t held_by_blocks);
// The peak of the phases no plan changes (embeddings forward and backward).
int64_t FixedPhasesPeak(const PassMemory& memory);

// A plan's predicted activation peak and recompute cost.
struct PlanCost {
  int64_t peak_bytes = 0;
  int64_t recompute_flops = 0;
};

// [in] plan: empty (keep everything) or one entry per block of `memory`.
PlanCost EvaluatePlan(const PassMemory& memory, const RecomputePlan& plan);

}  // namespace xlmr::recompute

#endif  // XLMR_FRAMEWORK_RECOMPUTE_MEMORY_MODEL_H_
