#!/usr/bin/env bash
# gpu_gemm_bench.py table on three small hand-written runs (ours heuristic, ours measured,
# torch): two rows must come out exactly, figures, ratios and the BGRADB column included, and the
# plan counts. A torch module that fails on import stands in front of any real one: the table
# must work on a host without torch (the GPU kit makes it even when the torch run failed).
set -euo pipefail
script="${TEST_SRCDIR}/${TEST_WORKSPACE}/bench/gpu_gemm_bench.py"
tmp=${TEST_TMPDIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/no_torch"
echo 'raise ImportError("the table must not import torch")' >"$tmp/no_torch/torch.py"

# One forward and one weight-gradient product per run; the measured run's weight gradient fell
# back to Gemm alone (no BGRADB algorithm), so the two of ours differ there.
record() {  # algorithms product m n k ms tflops [extra JSON members]
  echo "{\"size\": \"large\", \"linear\": \"output\", \"product\": \"$2\", \"m\": $3, \"n\": $4, \"k\": $5," \
    "\"dtype\": \"bf16\", \"algorithms\": \"$1\", \"ms\": $6, \"tflops\": $7${8:+, $8}}"
}
{
  record heuristic forward 4096 1024 4096 0.1 343.6
  record heuristic weight_grad 1024 4096 4096 0.125 274.9 '"row_sums_fused": true'
  echo '{"plans": 2, "measured": 0, "candidates_timed": 0}'
} >"$tmp/heuristic.jsonl"
{
  record measured forward 4096 1024 4096 0.08 429.5
  record measured weight_grad 1024 4096 4096 0.1 343.6 '"row_sums_fused": false'
  echo '{"plans": 2, "measured": 2, "candidates_timed": 11}'
} >"$tmp/measured.jsonl"
{
  record torch forward 4096 1024 4096 0.09 381.8
  record torch weight_grad 1024 4096 4096 0.2 171.8 '"row_sums_fused": false, "ms_with_f32_accumulate": 0.3'
} >"$tmp/torch.jsonl"

out=$(PYTHONPATH="$tmp/no_torch" python3 "$script" table --heuristic="$tmp/heuristic.jsonl" \
  --measured="$tmp/measured.jsonl" --torch="$tmp/torch.jsonl") || { echo "$out"; fail "table exited non-zero"; }
echo "$out"
expect() { grep -qxF -- "$1" <<<"$out" || fail "missing line: $1"; }
expect '| large | output | forward | 4096 | 1024 | 4096 | 343.6 | 429.5 | 381.8 | 1.25 | 1.12 |  |'
expect '| large | output | weight_grad | 1024 | 4096 | 4096 | 274.9 | 343.6 | 171.8 | 1.25 | 2.00 | heuristic/measured differ |'
expect '- measured: 2 problems planned, 2 by timing, 11 candidates timed'
echo PASS
