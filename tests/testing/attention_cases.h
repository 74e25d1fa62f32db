// The eager and fused attention problems of tests/gpu/attention_test.cc and
// tests/gpu/fused_attention_test.cc (CUDA against the CPU backend) and the tolerances those tests
// apply, shared with tests/framework/ops/attention_rounding_test.cc,
// which measures on the CPU what the tolerances must stand between: above what a change of
// summation order alone does (what separates a correct GPU kernel from the CPU), below what a
// missing half-precision rounding does (the bug they must catch).
#ifndef XLMR_TESTS_TESTING_ATTENTION_CASES_H_
#define XLMR_TESTS_TESTING_ATTENTION_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::testing {

struct AttentionCase {
  int64_t batch, seq, hidden;
  int heads;
  bool padding;  // batch row b keeps its first max(0, S - 2b) keys (0: all padding)
  std::string Name() const;
};

// Realistic (XLM-R base) and awkward shapes: odd S, S = 1, small head_dim; S > one block of
// threads (128); S > 1024 and not a multiple of 4, so a row's keys span several Philox blocks
// per thread and rows start inside a Philox block; a fully padded batch row (softmaxes to
// uniform, as on the CPU).
const std::vector<AttentionCase>& AttentionCases();

// The [B,S] i32 key mask of a case.
Tensor AttentionCaseKeyMask(const AttentionCase& c);

// Uniform [-2, 2) inputs rounded once to `dtype` (both backends see the same values), the mask,
// and an upstream gradient for the backward.
struct AttentionInputs {
  Tensor q, k, v, key_mask, d_context;
  Tensor cu_seqlens;  // packed (varlen) cases only
};
AttentionInputs AttentionCaseInputs(const AttentionCase& c, DType dtype);

// The dropout key of every case.
inline constexpr DropoutKey kAttentionCaseKey{/*seed=*/1234567890123ull, /*step=*/7,
                                              /*micro_step=*/1, /*layer=*/3, /*op=*/1};

// What tests/gpu/attention_test.cc allows of probs, context, dq, dk and dv, each measured
// against the CPU's tensor (the measurements behind each value: attention_rounding_test.cc):
//   max:  max |gpu - cpu| <= max * max |cpu|. Catches errors in a few elements of O(1) of the
//         largest (an index, a mask, a dropout element); sits above what a change of summation
//         order alone does, which can flip one half rounding of one element.
//   mean: mean |gpu - cpu| <= mean * max |cpu| (0: not checked, f32). Catches a missing
//         half-precision rounding, which moves most elements by a fraction of an ulp, where a
//         change of order moves only a few.
struct AttentionTolerances {
  double max, mean;
};
AttentionTolerances GpuAttentionTolerances(DType dtype);

// ---- Fused attention (head_dim 64, the CUDA kernels' head size) ----

struct FusedAttentionCase {
  int64_t batch, seq;
  int heads;
  std::vector<int64_t> lengths;  // real tokens of each sequence (0: all padding)
  bool left_padded = false;      // real tokens last (padding_side="left"), else first
  int64_t hidden() const { return heads * int64_t{64}; }
  bool IsReal(int64_t b, int64_t j) const;
  std::string Name() const;
};

// S = 1, 64, 129 (a partial last tile), 130 left-padded (a row whose whole first key tile is
// padding), 512, 1030 (not a multiple of 4: rows start inside Philox blocks); right padding with
// one sequence fully padded; several (batch, head) pairs.
const std::vector<FusedAttentionCase>& FusedAttentionCases();

Tensor FusedAttentionCaseKeyMask(const FusedAttentionCase& c);

// N(0, 1) inputs rounded once to `dtype`: scores q.k / 8 of spread ~1, so softmax rows are
// neither flat nor one-hot.
AttentionInputs FusedAttentionCaseInputs(const FusedAttentionCase& c, DType dtype);

inline constexpr DropoutKey kFusedAttentionCaseKey{/*seed=*/987654321987ull, /*step=*/5,
                                                   /*micro_step=*/2, /*layer=*/7, /*op=*/2};

// What tests/gpu/fused_attention_test.cc allows, as GpuAttentionTolerances: `max` for the
// context, dq, dk and dv (dq and dk against max(their largest, dv's largest): where every row
// has one key they are exactly zero, and what remains is rounding noise of dv's scale), `lse`
// for the logsumexp (fp32 from exact products either way), `mean` for f16's and bf16's mean errors.
struct FusedAttentionTolerances {
  double max, lse, mean;
};
FusedAttentionTolerances GpuFusedAttentionTolerances(DType dtype);

// ---- Packed (varlen) fused attention: ops::VarlenFusedAttention ----

// B sequences of `lengths` tokens packed back to back (T = their sum), `heads` heads of
// `head_dim`, dropout mask index stride `dropout_stride` (>= the longest length).
struct VarlenAttentionCase {
  std::vector<int64_t> lengths;
  int heads;
  int64_t head_dim = 64;
  int64_t dropout_stride = 0;
  int64_t hidden() const { return heads * head_dim; }
  int64_t tokens() const;
  int64_t max_length() const;
  std::string Name() const;
};

// head_dim 64 (the CUDA kernels' head size): mixed lengths including 1 and the longest (1030,
// 17 key tiles, the last of 6 keys), lengths on both sides of a tile edge (63, 64, 65, 129); one
// sequence only; many (64) sequences of lengths 1-96; XLM-R base's 12 heads at length 512;
// sequences of no tokens.
const std::vector<VarlenAttentionCase>& VarlenAttentionCases();

// [B + 1] i32 on the CPU: 0, lengths[0], lengths[0] + lengths[1], ..., T.
Tensor VarlenCuSeqlens(const VarlenAttentionCase& c);

// N(0, 1) q, k, v and d_context [T, H] rounded once to `dtype` (as FusedAttentionCaseInputs), and
// cu_seqlens; key_mask is left undefined (a packed batch has no padding).
AttentionInputs VarlenAttentionCaseInputs(const VarlenAttentionCase& c, DType dtype);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_TESTING_ATTENTION_CASES_H_
