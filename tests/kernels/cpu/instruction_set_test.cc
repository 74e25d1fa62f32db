// The cloned loops (XLMR_INSTRUCTION_SET_CLONES) must run the clone this CPU can: with AVX2 and
// FMA that is x86-64-v3 or v4, whose loops are vectorised and whose std::fma is one instruction.
// The expectation comes from the CPU's own flags, read here; the probe shows which clone the
// loader picked by whether its multiply-add came out fused (exact comparison: the two answers
// differ by 2^-24, and no rounding is involved in telling them apart).
#include "kernels/cpu/instruction_set.h"

#include <gtest/gtest.h>

namespace xlmr::kernels::cpu {
namespace {

TEST(InstructionSetTest, ClonedLoopsRunTheFmaCloneExactlyWhenTheCpuHasAvx2AndFma) {
  const bool cpu_has_v3_core = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  EXPECT_EQ(ClonedLoopsFuseMultiplyAdd(), cpu_has_v3_core)
      << "avx2: " << __builtin_cpu_supports("avx2") << ", fma: " << __builtin_cpu_supports("fma");
}

TEST(InstructionSetTest, WidestInstructionSetIsOneTheCpuSupports) {
  EXPECT_TRUE(CpuSupports(WidestInstructionSet()));
  if (__builtin_cpu_supports("avx512f")) { EXPECT_EQ(WidestInstructionSet(), InstructionSet::kAvx512); }
}

}  // namespace
}  // namespace xlmr::kernels::cpu
