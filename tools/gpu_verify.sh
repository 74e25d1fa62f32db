#!/usr/bin/env bash
# What a GPU host checks about the CUDA backend every time one is available (README.md,
# "Verifying the CUDA backend on a GPU host"), in commands that fit one device call each and
# write their results under $OUT (else --out=DIR, else ./gpu_verify_out).
#
#   tools/gpu_verify.sh bundle [DIR]          on the build machine: bundle every GPU test, the
#                                             NCCL and device tests and both recipes into DIR
#                                             (default .bundle/gpu_verify, git-ignored), and
#                                             DIR.tar.gz of it to copy (~25 MB vs ~80 MB; unpack
#                                             with tar xzf DIR.tar.gz -C "$(dirname DIR)")
#   tools/gpu_verify.sh tests [--bundle=DIR]  on the GPU host: run every bundled test binary
#                                             (CUDA ops vs the CPU backend, whole training steps,
#                                             HF parity, NCCL with one rank); tests.md + logs
#   tools/gpu_verify.sh e2e [--bundle=DIR]    on the GPU host: the default recipe run (embedded
#                                             langid data) on the CPU and on the GPU (fp32, fp16,
#                                             fp16 + --gradient_checkpointing), per-step losses
#                                             compared, accuracies, xlmr_predict on both
#                                             backends from the same model, and the GPU-trained
#                                             model loaded in Hugging Face; e2e.md + metrics
#   (speed and memory against Hugging Face: bench/gpu_bench.sh --bundle=DIR)
#
# Exit status: 0 when everything ran and passed, 1 when a test or a comparison failed, 2 for a
# usage error. The host needs the NVIDIA driver, its CUDA 13 libraries (system or pip wheels:
# see the bundle's run.sh) and python3; no Bazel.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
mode=$1
shift

# Every binary the GPU checks need. The GPU tests are queried, so a new one is bundled without
# editing this list.
bundle_targets() {
  (cd "$repo" && bazel query 'kind(cc_test, //tests/gpu/...)' 2>/dev/null) || exit 1
  echo //tests/framework/distributed:nccl_communicator_test
  echo //tests/framework/core:device_test
  echo //recipes:xlmr_finetune
  echo //recipes:xlmr_predict
}

if [ "$mode" = bundle ]; then
  [ $# -le 1 ] || usage
  dir=${1:-$repo/.bundle/gpu_verify}
  mapfile -t targets < <(bundle_targets)
  [ ${#targets[@]} -gt 4 ] || { echo "gpu_verify.sh: bazel query found no GPU tests" >&2; exit 1; }
  "$repo/tools/bundle.sh" "${targets[@]}" "$dir" || exit 1
  tar czf "$dir.tar.gz" -C "$(dirname "$dir")" "$(basename "$dir")" || exit 1
  echo "gpu_verify.sh: $dir.tar.gz ($(du -h "$dir.tar.gz" | cut -f1)) holds the bundle" >&2
  exit 0
fi

bundle=$repo/.bundle/gpu_verify
out=${OUT:-$PWD/gpu_verify_out}
for arg in "$@"; do
  case "$arg" in
    --bundle=*) bundle=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    *) usage ;;
  esac
done
[ -x "$bundle/run.sh" ] || { echo "--bundle=$bundle: no run.sh (make one with: tools/gpu_verify.sh bundle)" >&2; exit 2; }
mkdir -p "$out"
run=("$bundle/run.sh")

describe_host() {
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
  echo "- bundle: $(tr '\n' ' ' <"$bundle/BUNDLE_INFO")"
}

run_tests() {
  local report=$out/tests.md failed=0 binary name status
  mkdir -p "$out/tests"
  {
    echo "# GPU tests"
    describe_host
    echo "- command: tools/gpu_verify.sh tests --bundle=$bundle"
    echo
    echo "| test | result | seconds |"
    echo "|---|---|---:|"
  } >"$report"
  while IFS= read -r binary; do
    case "$binary" in recipes/*) continue ;; esac
    name=${binary//\//_}
    local start=$SECONDS
    "${run[@]}" "$binary" --gtest_output="xml:$out/tests/$name.xml" >"$out/tests/$name.log" 2>&1
    status=$?
    local result=passed
    if [ $status -ne 0 ]; then result="FAILED (exit $status)"; failed=1; fi
    grep -q '\[  SKIPPED \]' "$out/tests/$name.log" && result="$result, some SKIPPED"
    echo "| $binary | $result | $((SECONDS - start)) |" >>"$report"
    echo "$binary: $result" >&2
  done <"$bundle/BINARIES"
  # The measured errors the parity tests print, for the tolerance tables.
  { echo; echo '```'; cat "$out"/tests/*.log | grep -E '^parity|worst' | head -n 40; echo '```'; } >>"$report"
  cat "$report"
  return $failed
}

finetune_run() {  # name device [flags...]: the embedded default run, all of it
  local name=$1 device=$2
  shift 2
  "${run[@]}" recipes/xlmr_finetune --device="$device" --seed=42 --logging_steps=50 --overwrite_output_dir \
    --output_dir="$out/e2e/$name" --cache_dir="$out/e2e/cache_$name" "$@" >"$out/e2e/$name.log" 2>&1
}

run_e2e() {
  mkdir -p "$out/e2e"
  local failed=0
  # The CPU run is the reference; it runs beside the GPU runs (its speed is not measured here).
  finetune_run cpu cpu &
  local cpu_pid=$!
  finetune_run cuda_fp32 cuda || failed=1
  finetune_run cuda_fp16 cuda --fp16 || failed=1
  finetune_run cuda_fp16_ckpt cuda --fp16 --gradient_checkpointing || failed=1
  wait "$cpu_pid" || failed=1
  printf 'text\n%s\n' "Das ist ein kurzer deutscher Satz." "This is a short English sentence." \
    "Ceci est une courte phrase en français." >"$out/e2e/rows.tsv"
  cut -f1 "$repo/recipes/data/langid/test.tsv" |
    tail -n +2 | head -n 500 >>"$out/e2e/rows.tsv"
  for device in cpu cuda; do
    "${run[@]}" recipes/xlmr_predict --device="$device" --model_dir="$out/e2e/cpu" \
      --input_file="$out/e2e/rows.tsv" --output_file="$out/e2e/predict_$device.jsonl" \
      >"$out/e2e/predict_$device.log" 2>&1 || failed=1
  done
  # The GPU-trained fp16 model must load in Hugging Face and classify as xlmr_predict does.
  "${run[@]}" recipes/xlmr_predict --device=cuda --model_dir="$out/e2e/cuda_fp16" \
    --input_file="$out/e2e/rows.tsv" --output_file="$out/e2e/predict_cuda_fp16_model.jsonl" \
    >"$out/e2e/predict_cuda_fp16_model.log" 2>&1 || failed=1
  python3 "$repo/tools/check_hf_load.py" "$out/e2e/cuda_fp16" "$out/e2e/rows.tsv" \
    --predictions "$out/e2e/predict_cuda_fp16_model.jsonl" >"$out/e2e/hf_load.log" 2>&1 || failed=1
  {
    echo "# End-to-end runs on the GPU vs the CPU"
    describe_host
    echo "- command: tools/gpu_verify.sh e2e --bundle=$bundle"
    echo
  } >"$out/e2e.md"
  python3 "$repo/tools/gpu_verify_summary.py" "$out/e2e" >>"$out/e2e.md" || failed=1
  { echo; echo "Hugging Face loading the GPU-trained fp16 model (tools/check_hf_load.py):"; echo '```';
    tail -n 5 "$out/e2e/hf_load.log"; echo '```'; } >>"$out/e2e.md"
  cat "$out/e2e.md"
  return $failed
}

case "$mode" in
  tests) run_tests ;;
  e2e) run_e2e ;;
  *) usage ;;
esac
