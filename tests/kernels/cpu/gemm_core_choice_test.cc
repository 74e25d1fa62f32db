// Which OpenBLAS core the binaries restart with (kernels/cpu/gemm_core_choice.h). The expected
// names are OpenBLAS's own (its OPENBLAS_CORETYPE values) for the CPUs they are built for; the
// first case is the one that made this necessary: an AVX-512 Xeon VM whose model OpenBLAS 0.3.21
// does not know, so that it picked its Prescott kernels.
#include "kernels/cpu/gemm_core_choice.h"

#include <gtest/gtest.h>

#include <optional>

namespace xlmr::kernels::cpu {
namespace {

CpuVectorFeatures Avx2Cpu() {
  CpuVectorFeatures cpu;
  cpu.avx = cpu.avx2 = cpu.fma = true;
  return cpu;
}

CpuVectorFeatures Avx512Cpu() {
  CpuVectorFeatures cpu = Avx2Cpu();
  cpu.avx512_skylake = true;
  return cpu;
}

TEST(GemmCoreChoiceTest, UnknownAvx512XeonGetsSkylakeXInsteadOfPrescott) {
  EXPECT_EQ(WiderOpenBlasCore("Prescott", Avx512Cpu()), "SkylakeX");
  CpuVectorFeatures cooper_lake = Avx512Cpu();
  cooper_lake.avx512_bf16 = true;
  EXPECT_EQ(WiderOpenBlasCore("Prescott", cooper_lake), "Cooperlake");
  // A core with AVX2 kernels on an AVX-512 CPU is still narrower.
  EXPECT_EQ(WiderOpenBlasCore("Haswell", Avx512Cpu()), "SkylakeX");
}

TEST(GemmCoreChoiceTest, UnknownAvx2CpuGetsHaswell) {
  EXPECT_EQ(WiderOpenBlasCore("Prescott", Avx2Cpu()), "Haswell");
  EXPECT_EQ(WiderOpenBlasCore("nehalem", Avx2Cpu()), "Haswell");  // OpenBLAS's names match in any case
  EXPECT_EQ(WiderOpenBlasCore("Sandybridge", Avx2Cpu()), "Haswell");
}

TEST(GemmCoreChoiceTest, RecognisedCpusKeepTheirCore) {
  EXPECT_EQ(WiderOpenBlasCore("Zen", Avx2Cpu()), std::nullopt);       // an AMD EPYC with AVX2
  EXPECT_EQ(WiderOpenBlasCore("Haswell", Avx2Cpu()), std::nullopt);
  EXPECT_EQ(WiderOpenBlasCore("SkylakeX", Avx512Cpu()), std::nullopt);
  EXPECT_EQ(WiderOpenBlasCore("Cooperlake", Avx512Cpu()), std::nullopt);
}

TEST(GemmCoreChoiceTest, NothingWiderToGiveOrAnUnknownName) {
  CpuVectorFeatures sse_only;
  EXPECT_EQ(WiderOpenBlasCore("Prescott", sse_only), std::nullopt);
  CpuVectorFeatures avx_only;
  avx_only.avx = true;
  EXPECT_EQ(WiderOpenBlasCore("Prescott", avx_only), "Sandybridge");
  CpuVectorFeatures avx2_without_fma = Avx2Cpu();
  avx2_without_fma.fma = false;  // OpenBLAS's Haswell kernels use FMA
  EXPECT_EQ(WiderOpenBlasCore("Prescott", avx2_without_fma), "Sandybridge");
  EXPECT_EQ(WiderOpenBlasCore("SomeFutureCore", Avx512Cpu()), std::nullopt);
}

}  // namespace
}  // namespace xlmr::kernels::cpu
