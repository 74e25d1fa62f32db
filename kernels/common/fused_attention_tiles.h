// What the CPU and CUDA fused attention kernels (kernels/{cpu,cuda}/fused_attention.*) share so
// that they take the same steps: the key tile, whose boundaries are where the online softmax
// updates each row's running maximum (and so where the f16 roundings of the unnormalised
// probabilities happen), and the additive bias of a padding key.
#ifndef XLMR_KERNELS_COMMON_FUSED_ATTENTION_TILES_H_
#define XLMR_KERNELS_COMMON_FUSED_ATTENTION_TILES_H_

#include <cstdint>

namespace xlmr::kernels {

// Keys are visited in tiles of this many (the last tile of a row may be shorter), in order.
inline constexpr int64_t kFusedAttentionKeyTile = 64;

// torch.finfo(torch.float32).min, the additive mask Hugging Face puts on padding keys. Adding
// it (not -inf) keeps a row whose keys are all padding finite: it softmaxes to uniform.
inline constexpr float kPaddingKeyBias = -3.4028234663852886e38f;

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_FUSED_ATTENTION_TILES_H_
