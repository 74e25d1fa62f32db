#!/usr/bin/env bash
# CPU training speed and memory against Hugging Face, in one invocation (bench/results/cpu_train.md):
#
#   1. the embedded default's model and data (bench/cpu_train_bench.sh: the same batches on both
#      sides, dynamic padding; ours vs HF eager and sdpa);
#   2. an XLM-R base shape (12 x 768, 12 heads, vocabulary 250002, random weights saved by
#      transformers, bench/make_base_model.py), fixed-length batches [B, S] (ours: texts longer
#      than S, truncated; HF: random ids), without and with gradient checkpointing (ours:
#      --gradient_checkpointing; HF: gradient_checkpointing_enable()), ours vs HF eager and sdpa.
#
#   bench/cpu_speed_bench.sh [--threads=T] [--base_steps=N] [--base_batch=B] [--base_seq=S]
#                            [--default_steps=N] [--work=DIR]
#
# Prints for each run the median step time (steps 2..N at base shape; after 10 warm-up steps
# for the embedded default), tokens/s, peak RSS (/usr/bin/time for ours, ru_maxrss for HF) and
# the ratios to ours. T threads everywhere (OPENBLAS_NUM_THREADS for ours, torch.set_num_threads
# for HF). The machine may be shared: load averages are printed before and after.
set -euo pipefail

threads=2 base_steps=5 base_batch=8 base_seq=128 default_steps=60 work=/tmp/xlmr_cpu_speed_bench
for arg in "$@"; do
  case "$arg" in
    --threads=*) threads=${arg#*=} ;; --base_steps=*) base_steps=${arg#*=} ;;
    --base_batch=*) base_batch=${arg#*=} ;; --base_seq=*) base_seq=${arg#*=} ;;
    --default_steps=*) default_steps=${arg#*=} ;; --work=*) work=${arg#*=} ;;
    *) echo "usage: $0 [--threads=T] [--base_steps=N] [--base_batch=B] [--base_seq=S] [--default_steps=N] [--work=DIR]" >&2
       exit 2 ;;
  esac
done
[ "$base_steps" -ge 2 ] || { echo "--base_steps must be at least 2" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
load() { cut -d' ' -f1-3 /proc/loadavg; }
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
# OpenBLAS picks its GEMM kernels by CPU unless the environment names a core (and ours restarts
# onto wider ones when its pick is narrower than the CPU: docs/DECISIONS.md, "OpenBLAS runs
# kernels as wide as the CPU's vectors"); say which held for this run (the run record names the core).
echo "- OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-unset (OpenBLAS detects the CPU)}"
echo

echo "## Embedded default (bench/cpu_train_bench.sh)"
echo
bash "$repo/bench/cpu_train_bench.sh" --steps="$default_steps" --warmup=10 --threads="$threads" --max_load=100 2>&1 |
  grep -E '^(\||- )'
echo

source "$repo/bench/base_shape_inputs.sh"

tokens=$((base_batch * base_seq))
echo "## XLM-R base shape, batch [$base_batch, $base_seq], fp32, $threads threads, median of steps 2..$base_steps"
echo
echo "- load average before: $(load)"
echo
echo "| checkpointing | run | median step (s) | tokens/s | peak RSS (GiB) | speed ours/this | peak RSS ours/this |"
echo "|---|---|---:|---:|---:|---:|---:|"
for checkpointing in no yes; do
  ours_flags=() hf_flags=()
  [ "$checkpointing" = yes ] && ours_flags=(--gradient_checkpointing) hf_flags=(--gradient_checkpointing)
  read -r ours_s ours_rss < <(ours_base "$model" "${ours_flags[@]}")
  rows=("ours|$ours_s|$ours_rss")
  for attention in eager sdpa; do
    read -r hf_s hf_rss < <(hf_base "$model" "$attention" "${hf_flags[@]}")
    rows+=("HF $attention|$hf_s|$hf_rss")
  done
  for row in "${rows[@]}"; do
    IFS='|' read -r name seconds rss <<< "$row"
    python3 -c "
name, s, rss, os_, orss = '$name', $seconds, $rss, $ours_s, $ours_rss
print(f'| $checkpointing | {name} | {s:.3f} | {$tokens / s:.0f} | {rss / 2**30:.2f} | {s / os_:.2f} | {orss / rss:.2f} |')"
  done
done
echo
echo "- load average after: $(load)"
