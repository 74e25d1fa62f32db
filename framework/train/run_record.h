// The first line of metrics.jsonl: what ran the run, so that its numbers can be traced to the
// code that produced them (docs/CONTRACT.md). Today: the CPU backend's GEMM library, the core
// it chose, the threads, and the CPU's own vector features (framework/ops/cpu_gemm_library.h).
// The trainer writes it when it opens an empty metrics file; a resume that appends keeps the
// first run's line (TruncateMetricsForResume keeps it too).
#ifndef XLMR_FRAMEWORK_TRAIN_RUN_RECORD_H_
#define XLMR_FRAMEWORK_TRAIN_RUN_RECORD_H_

#include "nlohmann/json.hpp"

namespace xlmr::train {

// {"type": "run", "cpu_gemm_library": "OpenBLAS", "cpu_gemm_config": ..., "cpu_gemm_core": ...,
//  "cpu_threads": ..., "cpu_features": ..., "cpu_kernels_isa": ...}, read now.
nlohmann::ordered_json RunRecord();

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_RUN_RECORD_H_
