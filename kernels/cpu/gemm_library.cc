#include "kernels/cpu/gemm_library.h"

#include <cblas.h>

#include "kernels/cpu/instruction_set.h"
#include "kernels/cpu/parallel.h"

namespace xlmr::kernels::cpu {
namespace {

std::string CpuFeatures() {
  const CpuVectorFeatures& cpu = DetectCpuVectorFeatures();
  const struct {
    const char* name;
    bool present;
  } features[] = {
      {"avx2", cpu.avx2},
      {"fma", cpu.fma},
      {"avx512f", cpu.avx512f},
      {"avx512_bf16", cpu.avx512_bf16},
      {"amx_tile", cpu.amx_tile},
      {"amx_bf16", cpu.amx_bf16},
  };
  std::string list;
  for (const auto& feature : features) {
    if (!feature.present) continue;
    if (!list.empty()) list += ' ';
    list += feature.name;
  }
  return list;
}

const char* KernelIsaName(InstructionSet isa) {
  switch (isa) {
    case InstructionSet::kAvx512: return "avx512";
    case InstructionSet::kAvx2: return "avx2";
    case InstructionSet::kScalar: return "scalar";
  }
  return "scalar";
}

}  // namespace

GemmLibrary DescribeGemmLibrary() {
  GemmLibrary library;
  library.name = "OpenBLAS";
  library.config = openblas_get_config();
  library.core = openblas_get_corename();
  library.threads = CpuThreadCount();
  library.cpu_features = CpuFeatures();
  library.kernel_isa = KernelIsaName(WidestInstructionSet());
  return library;
}

std::string GemmLibrarySummary(const GemmLibrary& library) {
  return library.config + "; core " + library.core + "; " + std::to_string(library.threads) +
         (library.threads == 1 ? " thread" : " threads") +
         "; CPU: " + (library.cpu_features.empty() ? std::string("none") : library.cpu_features) +
         "; kernels: " + library.kernel_isa;
}

}  // namespace xlmr::kernels::cpu
