#include "framework/train/run_record.h"

#include "framework/ops/cpu_gemm_library.h"

namespace xlmr::train {

nlohmann::ordered_json RunRecord() {
  const ops::CpuGemmLibrary gemm = ops::DescribeCpuGemmLibrary();
  return {{"type", "run"},
          {"cpu_gemm_library", gemm.name},
          {"cpu_gemm_config", gemm.config},
          {"cpu_gemm_core", gemm.core},
          {"cpu_threads", gemm.threads},
          {"cpu_features", gemm.cpu_features},
          {"cpu_kernels_isa", gemm.kernel_isa}};
}

}  // namespace xlmr::train
