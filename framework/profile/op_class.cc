#include "framework/profile/op_class.h"

#include <utility>

#include "absl/strings/match.h"

namespace xlmr::profile {

OpClass ClassOfOp(absl::string_view op) {
  // Exact names first, then families by prefix; a new op without a row lands in kOther, where
  // the table shows it by name (the per-op table) rather than hiding it in a wrong class.
  static constexpr std::pair<absl::string_view, OpClass> kExact[] = {
      {"ops::Linear", OpClass::kGemm},
      {"ops::LinearBackward", OpClass::kGemm},
      {"ops::Attention", OpClass::kAttentionForward},
      {"ops::FusedAttention", OpClass::kAttentionForward},
      {"ops::VarlenFusedAttention", OpClass::kAttentionForward},
      {"ops::AttentionBackward", OpClass::kAttentionBackward},
      {"ops::FusedAttentionBackward", OpClass::kAttentionBackward},
      {"ops::VarlenFusedAttentionBackward", OpClass::kAttentionBackward},
      {"ops::LayerNorm", OpClass::kLayerNorm},
      {"ops::LayerNormBackward", OpClass::kLayerNorm},
      {"ops::DropoutAddLayerNorm", OpClass::kLayerNorm},  // the residual site fused on CUDA
      {"ops::DropoutAddLayerNormBackward", OpClass::kLayerNorm},  // not dropout's, by prefix
      {"ops::Gelu", OpClass::kActivation},
      {"ops::GeluBackward", OpClass::kActivation},
      {"ops::Tanh", OpClass::kActivation},
      {"ops::TanhBackward", OpClass::kActivation},
      {"ops::Cast", OpClass::kCast},
      {"ops::CastInto", OpClass::kCast},
      {"ops::Add", OpClass::kElementwise},
      {"ops::ScaleInPlace", OpClass::kElementwise},
      {"ops::Embedding", OpClass::kEmbedding},
      {"ops::EmbeddingBackward", OpClass::kEmbedding},
      {"ops::RobertaPositionIds", OpClass::kEmbedding},
      {"ops::RobertaPackedPositionIds", OpClass::kEmbedding},
      {"ops::AdamWStep", OpClass::kOptimizer},
      {"ops::AllFinite", OpClass::kOptimizer},
      {"ops::SumOfSquares", OpClass::kOptimizer},
      {"ops::UnscaleAndCheckFinite", OpClass::kOptimizer},
      {"ops::WriteStepInputs", OpClass::kOptimizer},
      {"ops::BeginStepState", OpClass::kOptimizer},
      {"ops::CopyStepRow", OpClass::kOptimizer},
      {"ops::FlagNonFiniteAndSumSquares", OpClass::kOptimizer},
      {"ops::AdamWStepWithState", OpClass::kOptimizer},
      {"ops::FinishStepState", OpClass::kOptimizer},
      {"transfer", OpClass::kTransfer},
  };
  for (const auto& [name, op_class] : kExact) {
    if (op == name) return op_class;
  }
  if (absl::StartsWith(op, "ops::Dropout")) return OpClass::kDropout;
  if (absl::StartsWith(op, "comm::")) return OpClass::kCommunication;
  for (absl::string_view loss : {"ops::CrossEntropy", "ops::BceWithLogits", "ops::Mse", "ops::Cosent",
                                 "ops::AccumulateCrossEntropy", "ops::AccumulateMse", "ops::AccumulateCosent"}) {
    if (absl::StartsWith(op, loss)) return OpClass::kLoss;
  }
  return OpClass::kOther;
}

const char* OpClassName(OpClass op_class) {
  switch (op_class) {
    case OpClass::kGemm: return "gemm";
    case OpClass::kAttentionForward: return "attention_fwd";
    case OpClass::kAttentionBackward: return "attention_bwd";
    case OpClass::kLayerNorm: return "layer_norm";
    case OpClass::kDropout: return "dropout";
    case OpClass::kActivation: return "activation";
    case OpClass::kCast: return "cast";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kEmbedding: return "embedding";
    case OpClass::kLoss: return "loss";
    case OpClass::kOptimizer: return "optimizer";
    case OpClass::kCommunication: return "communication";
    case OpClass::kTransfer: return "transfer";
    case OpClass::kOther: return "other";
    case OpClass::kHostGap: return "host_gap";
  }
  return "other";
}

}  // namespace xlmr::profile
