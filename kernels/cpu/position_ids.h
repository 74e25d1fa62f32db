// CPU kernel of RoBERTa's position ids (framework/ops/position_ids.h).
#ifndef XLMR_KERNELS_CPU_POSITION_IDS_H_
#define XLMR_KERNELS_CPU_POSITION_IDS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] ids [B,S] i32 on the CPU. Returns [B,S] i32: along each row, the k-th non-pad token
// gets pad_id + k (k from 1), every pad token gets pad_id.
Tensor RobertaPositionIds(const Tensor& ids, int32_t pad_id);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_POSITION_IDS_H_
