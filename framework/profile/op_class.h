// The classes a profile groups ops into (the rows of the per-class table --profile_steps
// writes): what a speed change is judged by, e.g. "GEMM 41% of the step, LayerNorm 6%".
#ifndef XLMR_FRAMEWORK_PROFILE_OP_CLASS_H_
#define XLMR_FRAMEWORK_PROFILE_OP_CLASS_H_

#include "absl/strings/string_view.h"

namespace xlmr::profile {

enum class OpClass {
  kGemm,                // Linear forward and backward (matrix products and their bias terms)
  kAttentionForward,    // eager, fused and varlen-fused attention
  kAttentionBackward,
  kLayerNorm,
  kDropout,
  kActivation,          // GELU, tanh (the pooler) and their backward
  kCast,                // dtype conversions (the half copies autocast reads)
  kElementwise,         // adds (residuals), scaling
  kEmbedding,           // lookups, their backward, position ids
  kLoss,                // the objectives and their gradients
  kOptimizer,           // finite check, unscale, norm, AdamW, the step-state decisions
  kCommunication,       // all-reduce, reduce-scatter, all-gather, broadcast
  kTransfer,            // copies between host and device memory
  kOther,               // any other op (e.g. selecting the first token)
  kHostGap,             // step time no op (CPU) or no device work (GPU) covers
};

inline constexpr int kNumOpClasses = static_cast<int>(OpClass::kHostGap) + 1;

// The class of the op named `op_name` (its framework/ops name, "ops::Linear", or one of the
// names below that are recorded outside framework/ops: "transfer", "comm::...").
OpClass ClassOfOp(absl::string_view op_name);

// The row name of `op_class` in profile tables ("gemm", "attention_fwd", ..., "host_gap").
const char* OpClassName(OpClass op_class);

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_OP_CLASS_H_
