#!/usr/bin/env bash
# The CPU GEMM libraries at the model's own matrix products, and PyTorch's matmul at the same
# shapes (issue 41 item 1): runs bench/gemm_bench.cc (OpenBLAS over our pool and threaded,
# oneDNN dnnl_sgemm and matmul, BLIS) and bench/torch_gemm_bench.py once per thread count, and
# prints one markdown section for bench/results/cpu_gemm_libraries.md: the CPU (lscpu), the
# commit, each library's version and chosen ISA, the load average before and after each run.
#
#   bench/gemm_bench.sh [--threads="2 1"] [--repeats=N] [--quick] [--out=FILE]
#
# No environment variable chooses a kernel: those that would (OPENBLAS_CORETYPE,
# ONEDNN_MAX_CPU_ISA, BLIS_ARCH_TYPE, ...) are unset for the runs. Thread counts go through
# OPENBLAS_NUM_THREADS (the CPU backend's pool, read when it loads); gemm_bench gives oneDNN and
# BLIS the same count. Take the real figures on a quiet machine (the load is printed; a loaded
# machine's figures are not a result). --quick runs tiny shapes: a smoke test, never a result.
set -euo pipefail

threads_list="2 1" repeats=10 quick="" out=""
for arg in "$@"; do
  case "$arg" in
    --threads=*) threads_list=${arg#*=} ;; --repeats=*) repeats=${arg#*=} ;;
    --quick) quick=--quick ;; --out=*) out=${arg#*=} ;;
    *) echo "usage: $0 [--threads=\"2 1\"] [--repeats=N] [--quick] [--out=FILE]" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
bazel build -c opt //bench:gemm_bench --disk_cache="$HOME/.cache/xlmr_trainer_bazel" >&2
bench=$(bazel info -c opt bazel-bin 2>/dev/null)/bench/gemm_bench

kernel_vars=(OPENBLAS_CORETYPE OPENBLAS_VERBOSE OPENBLAS_NUM_THREADS GOTO_NUM_THREADS
             OMP_NUM_THREADS ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA ONEDNN_CPU_ISA_HINTS
             DNNL_CPU_ISA_HINTS ONEDNN_VERBOSE BLIS_ARCH_TYPE BLIS_NUM_THREADS
             MKL_ENABLE_INSTRUCTIONS MKL_NUM_THREADS ATEN_CPU_CAPABILITY)
was_set=()
for var in "${kernel_vars[@]}"; do
  if [ -n "${!var+x}" ]; then was_set+=("$var=${!var}"); unset "$var"; fi
done

load() { cut -d' ' -f1-3 /proc/loadavg; }
cpu_flags() {
  local flags
  flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
            grep -xE 'avx2|fma|avx512f|avx512bw|avx512vl|avx512_vnni|avx512_bf16|amx_tile|amx_bf16|amx_int8' |
            tr '\n' ' ')
  echo "${flags% }"
}

section() {
  echo "## CPU GEMM libraries at the model's shapes$([ -n "$quick" ] && echo ' (--quick smoke run: NOT a measurement)')"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs visible; flags: $(cpu_flags)"
  echo "- command: bench/gemm_bench.sh $*"
  echo "- environment: ${was_set[*]:-no kernel-choosing variable was set}$([ ${#was_set[@]} -gt 0 ] && echo ' (unset for the runs)')"
  for threads in $threads_list; do
    echo
    echo "### ${threads} thread(s): OpenBLAS, oneDNN, BLIS (bench/gemm_bench.cc)"
    echo
    echo "- load average before: $(load)"
    echo
    OPENBLAS_NUM_THREADS=$threads "$bench" --repeats="$repeats" $quick
    echo
    echo "- load average after: $(load)"
    echo
    echo "### ${threads} thread(s): PyTorch matmul (bench/torch_gemm_bench.py)"
    echo
    echo "- load average before: $(load)"
    echo
    python3 bench/torch_gemm_bench.py --threads="$threads" --repeats="$repeats" $quick
    echo
    echo "- load average after: $(load)"
  done
}

if [ -n "$out" ]; then section "$@" | tee "$out"; else section "$@"; fi
