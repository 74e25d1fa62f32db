#!/usr/bin/env bash
# Results do not depend on the thread count: the embedded default trained for a few steps with
# OPENBLAS_NUM_THREADS=1, 2 and 4 (the CPU backend's one thread setting: its pool and, through
# it, the GEMMs, kernels/cpu/gemm.h) writes byte-identical weights, in fp32 and in fp16, with
# dropout on and with gradient checkpointing. Its matrix products have ~1500 rows, so they are
# cut into blocks that different thread counts hand out differently.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

for variant in fp32 fp16 checkpointing; do
  case "$variant" in
    fp32) extra=() ;; fp16) extra=(--fp16) ;; checkpointing) extra=(--gradient_checkpointing) ;;
  esac
  for threads in 1 2 4; do
    OPENBLAS_NUM_THREADS=$threads "$finetune" --max_steps=6 --save_steps=6 --cache_dir=cache \
      --output_dir="out_${variant}_$threads" "${extra[@]}" > "$variant.$threads.log" 2>&1 ||
      fail "$variant with $threads threads exited $?: $(tail -n 3 "$variant.$threads.log")"
  done
  for threads in 2 4; do
    cmp -s "out_${variant}_1/model.safetensors" "out_${variant}_$threads/model.safetensors" ||
      fail "$variant: the weights after 6 steps differ between 1 and $threads threads"
  done
done
[ "$failures" -eq 0 ] && echo "thread count test passed"
exit "$failures"
