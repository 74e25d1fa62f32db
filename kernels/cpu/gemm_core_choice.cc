#include "kernels/cpu/gemm_core_choice.h"

#include <cblas.h>
#include <strings.h>
#include <unistd.h>

#include <cstdlib>

namespace xlmr::kernels::cpu {
namespace {

// How wide a vector unit a core's kernels use; a core name OpenBLAS 0.3.21 has (dynamic.c's
// table) maps to one, matched as OpenBLAS matches OPENBLAS_CORETYPE: case-insensitively.
enum class VectorWidth { kUnknown, kSse, kAvx, kAvx2, kAvx512 };

VectorWidth WidthOfCore(std::string_view core) {
  struct Row {
    std::string_view name;
    VectorWidth width;
  };
  static constexpr Row kCores[] = {
      {"Katmai", VectorWidth::kSse},         {"Coppermine", VectorWidth::kSse},
      {"Northwood", VectorWidth::kSse},      {"Prescott", VectorWidth::kSse},
      {"Banias", VectorWidth::kSse},         {"Atom", VectorWidth::kSse},
      {"Core2", VectorWidth::kSse},          {"Penryn", VectorWidth::kSse},
      {"Dunnington", VectorWidth::kSse},     {"Nehalem", VectorWidth::kSse},
      {"Athlon", VectorWidth::kSse},         {"Opteron", VectorWidth::kSse},
      {"Barcelona", VectorWidth::kSse},      {"Nano", VectorWidth::kSse},
      {"Bobcat", VectorWidth::kSse},         {"Sandybridge", VectorWidth::kAvx},
      {"Bulldozer", VectorWidth::kAvx},      {"Piledriver", VectorWidth::kAvx},
      {"Steamroller", VectorWidth::kAvx},    {"Excavator", VectorWidth::kAvx},
      {"Haswell", VectorWidth::kAvx2},       {"Zen", VectorWidth::kAvx2},
      {"SkylakeX", VectorWidth::kAvx512},    {"Cooperlake", VectorWidth::kAvx512},
      {"SapphireRapids", VectorWidth::kAvx512},
  };
  for (const Row& row : kCores) {
    if (core.size() == row.name.size() && strncasecmp(core.data(), row.name.data(), core.size()) == 0) {
      return row.width;
    }
  }
  return VectorWidth::kUnknown;
}

}  // namespace

std::optional<std::string> WiderOpenBlasCore(std::string_view picked_core, const CpuVectorFeatures& cpu) {
  const VectorWidth picked = WidthOfCore(picked_core);
  if (picked == VectorWidth::kUnknown) return std::nullopt;  // not ours to second-guess
  struct Choice {
    bool runs;
    VectorWidth width;
    const char* core;
  };
  const Choice choices[] = {
      {cpu.avx512_skylake && cpu.avx512_bf16, VectorWidth::kAvx512, "Cooperlake"},
      {cpu.avx512_skylake, VectorWidth::kAvx512, "SkylakeX"},
      {cpu.avx2 && cpu.fma, VectorWidth::kAvx2, "Haswell"},
      {cpu.avx, VectorWidth::kAvx, "Sandybridge"},
  };
  for (const Choice& choice : choices) {
    if (!choice.runs) continue;
    if (choice.width > picked) return std::string(choice.core);
    return std::nullopt;  // the widest the CPU runs is no wider than the picked core's
  }
  return std::nullopt;
}

void RestartWithWiderGemmKernelsIfNeeded(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice, or our restart's
  const std::optional<std::string> core = WiderOpenBlasCore(openblas_get_corename(), DetectCpuVectorFeatures());
  if (!core.has_value()) return;
  if (setenv("OPENBLAS_CORETYPE", core->c_str(), /*overwrite=*/1) != 0) return;
  execv("/proc/self/exe", argv);
  // The restart failed (no /proc, say): carry on with the kernels OpenBLAS picked, and leave the
  // variable unset again so that --version and the run record say what runs.
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace xlmr::kernels::cpu
