// What the CPU and CUDA fused attention kernels (kernels/{cpu,cuda}/fused_attention.*) share so
// that they take the same steps: the key tile, whose boundaries are where the online softmax
// updates each row's running maximum (and so where the f16 roundings of the unnormalised
// probabilities happen). The padding keys' bias is kernels/common/attention_geometry.h's.
#ifndef XLMR_KERNELS_COMMON_FUSED_ATTENTION_TILES_H_
#define XLMR_KERNELS_COMMON_FUSED_ATTENTION_TILES_H_

#include <cstdint>

namespace xlmr::kernels {

// Keys are visited in tiles of this many (the last tile of a row may be shorter), in order.
inline constexpr int64_t kFusedAttentionKeyTile = 64;

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_FUSED_ATTENTION_TILES_H_
