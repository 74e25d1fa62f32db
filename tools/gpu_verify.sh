#!/usr/bin/env bash
# What a GPU host checks about the CUDA backend every time one is available (README.md,
# "Verifying the CUDA backend on a GPU host"), in commands that fit one device call each and
# write their results under $OUT (else --out=DIR, else ./gpu_verify_out).
#
#   tools/gpu_verify.sh kit [--bin_dir=DIR --targets=LABEL,...] [--archive=PATH.tar.gz]
#                       on the build machine: build the bundle below, add the scripts and data
#                       the device mode needs, pack it all into ONE archive (at most 48 MiB;
#                       default .bundle/xlmr_kit.tar.gz, git-ignored) and print the two device
#                       commands (each one line, at most 2000 characters) that unpack and run it
#                       from a copy of the repository: the first runs `device`, the second
#                       `device --long`. --bin_dir/--targets pack prebuilt binaries instead of
#                       building (tests/tools/gpu_kit_test.sh).
#   tools/gpu_verify.sh device [--long] [--out=DIR]
#                       on the GPU host, inside an unpacked kit: the GPU tests (with
#                       XLMR_REQUIRE_GPU=1: a test that sees no device fails), e2e, the
#                       features (tools/gpu_features.sh: token classification, question
#                       answering, regression, BERT, RoBERTa, CamemBERT, bf16, an fp16 overflow
#                       that skips steps, recompute under --activation_memory_budget with its
#                       measured peak against the plan's; each run on the GPU against the same
#                       run on the CPU) and a short benchmark (XLM-R base, seq 128 and 512, ours
#                       vs HF + PyTorch AMP, with and without --gradient_checkpointing; at seq
#                       128 also 32k-token optimizer steps (accumulation 4), bf16, ours
#                       without CUDA graphs and ours with --gemm_algorithms=measured) and,
#                       right before it, alone on the GPU too, the GEMM benchmark (`gemm`
#                       below) and then the attention benchmark (`attention` below), each under
#                       its own time limit (XLMR_KIT_SECONDS=tests:240,e2e:260,features:240,
#                       gemm:30,attention:30,bench:235 by default; tests, e2e and features run
#                       side by side, then gemm, then attention, then the benchmark: under 9.5
#                       minutes at most). --long: only the benchmark, XLM-R large at seq 512
#                       (limit 500 s).
#                       Our base seq-128 run (short) and large seq-512 run (long), without
#                       checkpointing, each train two more steps under --profile_steps: their
#                       profile (op_classes.md/.json, trace.json.gz) is in logs.tar.gz under
#                       bench/profile_SIZE_SEQ/, and the summary's benchmark section has our
#                       kernel launches and host waits per step.
#                       Writes exactly three files under OUT: summary.md (GPU, driver, CUDA
#                       runtime, cuBLASLt and NCCL versions, every part's result),
#                       results.json, logs.tar.gz (every log, at most 15 MiB).
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
#   tools/gpu_verify.sh gemm [--bundle=DIR]   on the GPU host: bench/gpu_gemm_bench (cuBLASLt at the
#                                             model's Linear shapes) with heuristic and with
#                                             measured algorithms, and PyTorch's products
#                                             (bench/gpu_gemm_bench.py torch); gemm/gpu_gemm.md
#                                             (their table) + gemm/gemm_*.jsonl and logs
#   tools/gpu_verify.sh attention [--bundle=DIR]
#                                             on the GPU host: bench/gpu_attention_bench (our
#                                             fused attention, forward and backward, at XLM-R's
#                                             shapes) in f16 and bf16, and PyTorch's SDPA
#                                             backends at the same shapes
#                                             (bench/gpu_attention_bench.py torch);
#                                             attention/gpu_attention.md (their table, the goal's
#                                             verdicts) + attention/attention_*.jsonl and logs
#   (speed and memory against Hugging Face: bench/gpu_bench.sh --bundle=DIR)
#
# Exit status: 0 when everything ran and passed, 1 when a test or a comparison failed, 2 for a
# usage error. The host needs the NVIDIA driver, its CUDA 13 libraries (system or pip wheels:
# see the bundle's run.sh) and python3; no Bazel.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Builds share CI's disk cache (.ci/run), so a kit after a CI run compiles only what changed.
disk_cache=()
[ -n "${HOME:-}" ] && disk_cache=("--disk_cache=$HOME/.cache/xlmr_trainer_bazel")
usage() { sed -n '2,/^set -uo pipefail/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
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
  echo //bench:gpu_gemm_bench
  echo //bench:gpu_attention_bench
}

if [ "$mode" = bundle ]; then
  [ $# -le 1 ] || usage
  dir=${1:-$repo/.bundle/gpu_verify}
  mapfile -t targets < <(bundle_targets)
  [ ${#targets[@]} -gt 4 ] || { echo "gpu_verify.sh: bazel query found no GPU tests" >&2; exit 1; }
  "$repo/tools/bundle.sh" "${disk_cache[@]}" "${targets[@]}" "$dir" || exit 1
  tar czf "$dir.tar.gz" -C "$(dirname "$dir")" "$(basename "$dir")" || exit 1
  echo "gpu_verify.sh: $dir.tar.gz ($(du -h "$dir.tar.gz" | cut -f1)) holds the bundle" >&2
  exit 0
fi

# ---- kit: one archive and the device commands that run it ----

# What the kit carries besides the bundle: the device mode's scripts and data, at their
# repository paths, so that the unpacked kit's root stands in for the repository.
kit_files=(tools/gpu_verify.sh tools/gpu_verify_summary.py tools/gpu_kit_report.py
  tools/check_hf_load.py tools/gpu_features.sh tools/gpu_features_summary.py
  bench/gpu_bench.sh bench/gpu_bench_summary.py bench/hf_train_gpu.py bench/gpu_gemm_bench.py
  bench/gpu_attention_bench.py bench/cuda_event_timing.py
  recipes/data/langid/test.tsv recipes/data/langid/sentencepiece.bpe.model
  tests/golden/tiny_bert/sequence_classification/{config.json,model.safetensors,tokenizer_config.json,vocab.txt}
  tests/golden/tiny_roberta/model/{config.json,merges.txt,model.safetensors,tokenizer_config.json,vocab.json}
  tests/golden/tiny_camembert/model/{config.json,model.safetensors,sentencepiece.bpe.model})
# The device runner's limits: 64 MiB of files travel with the call, the repository's tracked
# files included (33 MiB of them at the end of 2026: the archive gets what they leave), and one
# command line of at most 2000 characters.
kit_travel_limit=$((64 * 1024 * 1024))
kit_archive_limit=$((48 * 1024 * 1024))
kit_command_limit=2000

# The one-line device command: unpack ARCHIVE (a path from the repository root) into a fresh
# folder and run the device mode from it, with any further arguments.
kit_command() {
  local archive=$1 extra=${2:-}
  printf 'd=$(mktemp -d) && tar xzf %s -C "$d" && XLMR_REQUIRE_GPU=1 "$d"/xlmr_kit/tools/gpu_verify.sh device%s' \
    "$archive" "${extra:+ $extra}"
}

make_kit() {
  local bin_dir="" target_list="" archive=$repo/.bundle/xlmr_kit.tar.gz arg
  for arg in "$@"; do
    case "$arg" in
      --bin_dir=*) bin_dir=${arg#*=} ;;
      --targets=*) target_list=${arg#*=} ;;
      --archive=*) archive=${arg#*=} ;;
      *) usage ;;
    esac
  done
  case "$archive" in *.tar.gz) ;; *) echo "--archive=$archive: must end in .tar.gz" >&2; exit 2 ;; esac
  if [ -n "$bin_dir" ] && [ -z "$target_list" ]; then echo "--bin_dir needs --targets" >&2; exit 2; fi
  local targets=()
  if [ -n "$target_list" ]; then
    IFS=, read -ra targets <<<"$target_list"
  else
    mapfile -t targets < <(bundle_targets)
    [ ${#targets[@]} -gt 4 ] || { echo "gpu_verify.sh: bazel query found no GPU tests" >&2; exit 1; }
    targets+=(//tools:cuda_versions)
  fi
  mkdir -p "$(dirname "$archive")"
  archive=$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")
  local staging_root=${archive%.tar.gz}.staging file
  local staging=$staging_root/xlmr_kit
  rm -rf "$staging_root"
  mkdir -p "$staging"
  "$repo/tools/bundle.sh" ${bin_dir:+"--bin_dir=$bin_dir"} "${disk_cache[@]}" "${targets[@]}" "$staging/bundle" >&2 \
    || exit 1
  # The bundle's binaries and CUDA code as xz inside the gzip archive: half gzip's size, and the
  # device unpacks it (unpack_bundle) with tar or, where the host lacks xz, Python's lzma.
  tar cf - -C "$staging" bundle | xz -T2 -6 >"$staging/bundle.tar.xz" || exit 1
  rm -rf "$staging/bundle"
  for file in "${kit_files[@]}"; do
    mkdir -p "$staging/$(dirname "$file")"
    cp "$repo/$file" "$staging/$file" || exit 1
  done
  tar czf "$archive" -C "$staging_root" xlmr_kit || exit 1
  rm -rf "$staging_root"

  # The archive is named in the command as the device's copy of the repository sees it.
  local relative=$archive
  [[ $archive == "$repo"/* ]] && relative=${archive#"$repo"/}
  local bytes short long failed=0
  bytes=$(stat -c %s "$archive")
  short=$(kit_command "$relative")
  long=$(kit_command "$relative" --long)
  printf '%s\n%s\n' "$short" "$long" >"${archive%.tar.gz}.commands"
  echo "archive: $relative ($bytes bytes, $((bytes / 1048576)) MiB; limit $((kit_archive_limit / 1048576)) MiB)"
  if [ "$bytes" -gt "$kit_archive_limit" ]; then
    echo "gpu_verify.sh: the archive is over its limit" >&2
    failed=1
  fi
  local tracked
  tracked=$(cd "$repo" && git ls-files -z 2>/dev/null | xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
  echo "with the repository's tracked files ($tracked bytes): $((tracked + bytes)) of the $kit_travel_limit bytes a device call takes"
  if [ $((tracked + bytes)) -gt "$kit_travel_limit" ]; then
    echo "gpu_verify.sh: the archive and the repository are over what a device call takes" >&2
    failed=1
  fi
  echo "device call: run(command=<below>, carry=[\"$relative\"], timeout_s=600)"
  echo "short check (GPU tests, e2e, features, base benchmark), ${#short} characters:"
  echo "$short"
  echo "long benchmark (XLM-R large, seq 512), ${#long} characters:"
  echo "$long"
  if [ ${#short} -gt "$kit_command_limit" ] || [ ${#long} -gt "$kit_command_limit" ]; then
    echo "gpu_verify.sh: a command is over $kit_command_limit characters" >&2
    failed=1
  fi
  return $failed
}

# ---- device: everything the GPU host checks, in one command, three files back ----

# Seconds per part: XLMR_KIT_SECONDS=tests:240,e2e:260,features:240,gemm:30,attention:30,bench:235
# [,long:500].
# Sets limit_NAME.
read_limits() {
  local item name value
  limit_tests=240 limit_e2e=260 limit_features=240 limit_gemm=30 limit_attention=30 limit_bench=235
  limit_long=500
  IFS=, read -ra items <<<"${XLMR_KIT_SECONDS:-}"
  for item in "${items[@]}"; do
    name=${item%%:*} value=${item#*:}
    case "$name" in tests | e2e | features | gemm | attention | bench | long) ;; *) name="" ;; esac
    if [ -z "$name" ] || ! [[ $value =~ ^[0-9]+$ ]]; then
      echo "XLMR_KIT_SECONDS=${XLMR_KIT_SECONDS}: '$item' is not tests|e2e|features|gemm|attention|bench|long:SECONDS" >&2
      exit 2
    fi
    printf -v "limit_$name" %s "$value"
  done
}

# part NAME LIMIT COMMAND...: runs COMMAND under `timeout` (its whole process group is stopped
# at LIMIT seconds), output in WORK/NAME.out, and records the outcome in WORK/parts/NAME.json.
part() {
  local name=$1 limit=$2 start=$SECONDS status
  shift 2
  echo "gpu_verify.sh device: $name (limit ${limit}s)" >&2
  timeout -k 10 "$limit" "$@" >"$work/$name.out" 2>&1
  status=$?
  printf '{"exit_code": %d, "seconds": %d, "limit_seconds": %d}\n' "$status" $((SECONDS - start)) "$limit" \
    >"$work/parts/$name.json"
  echo "gpu_verify.sh device: $name exit $status after $((SECONDS - start))s" >&2
  return $status
}

describe_device_host() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi >"$work/host/nvidia-smi.txt" 2>&1
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader \
      >"$work/host/gpus.csv" 2>&1
  else
    echo "no nvidia-smi on this host" >"$work/host/gpus.csv"
  fi
  if grep -qx tools/cuda_versions "$bundle/BINARIES"; then
    timeout 60 "$bundle/run.sh" tools/cuda_versions >"$work/host/cuda_versions.json" 2>"$work/host/cuda_versions.log"
  else
    echo "tools/cuda_versions is not in this kit's bundle" >"$work/host/cuda_versions.log"
  fi
  timeout 60 python3 -c 'import sys, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' \
    >"$work/host/python.txt" 2>&1
}

# logs.tar.gz: every log and report of the run, without model weights, caches and checkpoints;
# only the text files when that is still over 15 MiB (the runner returns files up to 16 MiB).
pack_logs() {
  local logs=$out/logs.tar.gz
  tar czf "$logs" -C "$work" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.model' \
    --exclude='*.tsv' --exclude='*.tokens' \
    --exclude='cache*' --exclude='checkpoint-*' --exclude='model_*' . 2>/dev/null
  if [ "$(stat -c %s "$logs")" -gt $((15 * 1048576)) ]; then
    (cd "$work" && find . -type f \( -name '*.log' -o -name '*.md' -o -name '*.json' -o -name '*.jsonl' \
      -o -name '*.xml' -o -name '*.txt' -o -name '*.out' -o -name '*.csv' \) -size -2M -print0 |
      tar czf "$logs" --null -T -)
  fi
}

# The kit's bundle.tar.xz into bundle/ (once): GNU tar with xz, else Python's tarfile (lzma is in
# its standard library).
unpack_bundle() {
  [ -d "$bundle" ] || [ ! -f "$repo/bundle.tar.xz" ] && return 0
  tar xJf "$repo/bundle.tar.xz" -C "$repo" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$repo/bundle.tar.xz" "$repo" ||
    { echo "gpu_verify.sh device: cannot unpack bundle.tar.xz" >&2; exit 2; }
}

run_device() {
  local long=0 arg failed=0
  for arg in "$@"; do
    case "$arg" in
      --long) long=1 ;;
      --out=*) out=${arg#*=} ;;
      *) usage ;;
    esac
  done
  bundle=$repo/bundle
  unpack_bundle
  [ -x "$bundle/run.sh" ] || { echo "gpu_verify.sh device: $bundle/run.sh missing: run inside an unpacked kit" >&2; exit 2; }
  read_limits
  mkdir -p "$out"
  work=$(mktemp -d "${TMPDIR:-/tmp}/xlmr_kit_run.XXXXXX")
  mkdir -p "$work/parts" "$work/host" "$work/tmp"
  export XLMR_REQUIRE_GPU=1  # a GPU test that sees no device fails instead of skipping
  describe_device_host
  local self="$repo/tools/gpu_verify.sh"
  local bench=("$repo/bench/gpu_bench.sh" --bundle="$bundle" --out="$work/bench" --runners=ours,sdpa)
  if [ $long -eq 1 ]; then
    TMPDIR=$work/tmp part long "$limit_long" "${bench[@]}" --sizes=large --seq_lens=512 \
      --checkpointing=off,on --steps=20 --warmup=5 --run_timeout=$((limit_long / 5)) --profile=large:512 || failed=1
  else
    # The tests, e2e and the features share the GPU (none is timed; their CPU oracle runs use
    # the host's cores); the benchmark runs alone after them.
    part tests "$limit_tests" "$self" tests --bundle="$bundle" --out="$work" &
    local tests_pid=$!
    part e2e "$limit_e2e" "$self" e2e --bundle="$bundle" --out="$work" &
    local e2e_pid=$!
    part features "$limit_features" "$repo/tools/gpu_features.sh" --bundle="$bundle" --out="$work" &
    local features_pid=$!
    wait "$tests_pid" || failed=1
    wait "$e2e_pid" || failed=1
    wait "$features_pid" || failed=1
    # The GEMMs alone on an otherwise idle GPU (their timings are the point); a failure is
    # recorded and the benchmark still runs.
    part gemm "$limit_gemm" "$self" gemm --bundle="$bundle" --out="$work" || failed=1
    # Attention alone on the idle GPU too, ours and PyTorch's SDPA backends in the same call (the
    # goal compares them there); as for gemm, a failure is recorded and the benchmark still runs.
    part attention "$limit_attention" "$self" attention --bundle="$bundle" --out="$work" || failed=1
    # 14 runs: seq 128 and 512 with and without checkpointing, and at seq 128 the 32k-token step
    # (accumulation 4) and bf16, each ours and HF sdpa, and ours without CUDA graphs and with
    # measured GEMM algorithms; 12
    # optimizer steps, 4 of them warm-up (ours: step 1 direct, 2 captured, replays after).
    TMPDIR=$work/tmp part bench "$limit_bench" "${bench[@]}" --sizes=base --seq_lens=128,512 \
      --checkpointing=off,on --variants=128:accum4,128:bf16,128:nographs,128:measured --steps=12 --warmup=4 \
      --run_timeout=$((limit_bench / 6)) --profile=base:128 || failed=1
  fi
  python3 "$repo/tools/gpu_kit_report.py" --work="$work" --out="$out" --bundle="$bundle" \
    --mode="$([ $long -eq 1 ] && echo long || echo short)" || failed=1
  pack_logs
  cat "$out/summary.md"
  echo "gpu_verify.sh device: $out holds $(ls "$out" | tr '\n' ' ')" >&2
  return $failed
}

if [ "$mode" = kit ]; then
  make_kit "$@"
  exit $?
fi
if [ "$mode" = device ]; then
  out=${OUT:-$PWD/gpu_verify_out}
  run_device "$@"
  exit $?
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
  echo "- GPU: $( (nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader ||
    echo "nvidia-smi failed or is missing") 2>/dev/null | head -n 1)"
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
  local count=0
  while IFS= read -r binary; do
    case "$binary" in recipes/* | tools/* | bench/*) continue ;; esac
    count=$((count + 1))
    name=${binary//\//_}
    local start=$SECONDS
    "${run[@]}" "$binary" --gtest_output="xml:$out/tests/$name.xml" >"$out/tests/$name.log" 2>&1
    status=$?
    local result=passed
    if [ $status -ne 0 ]; then result="FAILED (exit $status)"; failed=1; fi
    if grep -q '\[  SKIPPED \]' "$out/tests/$name.log"; then
      # Every skip in these binaries means "no GPU visible": on a GPU host that is a failure.
      if [ "${XLMR_REQUIRE_GPU:-0}" = 1 ]; then
        result="FAILED (tests SKIPPED with XLMR_REQUIRE_GPU=1)"
        failed=1
      else
        result="$result, some SKIPPED"
      fi
    fi
    echo "| $binary | $result | $((SECONDS - start)) |" >>"$report"
    echo "$binary: $result" >&2
  done <"$bundle/BINARIES"
  if [ $count -eq 0 ]; then
    echo "| (none) | FAILED: the bundle holds no test binary | 0 |" >>"$report"
    failed=1
  fi
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

# Each run's JSON lines, and their table redone after every run, so that a time limit stopping a
# later run leaves the earlier ones' figures in gpu_gemm.md.
run_gemm() {
  local dir=$out/gemm failed=0 algorithms header
  mkdir -p "$dir"
  header=$(echo "# GEMMs at the model's Linear shapes: ours (cuBLASLt) and PyTorch's"; describe_host
    echo "- command: tools/gpu_verify.sh gemm --bundle=$bundle")
  for algorithms in heuristic measured torch; do
    if [ "$algorithms" = torch ]; then
      python3 "$repo/bench/gpu_gemm_bench.py" torch >"$dir/gemm_torch.jsonl" 2>"$dir/gemm_torch.log" || failed=1
    else
      "${run[@]}" bench/gpu_gemm_bench --gemm_algorithms="$algorithms" >"$dir/gemm_$algorithms.jsonl" \
        2>"$dir/gemm_$algorithms.log" || failed=1
    fi
    { printf '%s\n\n' "$header"
      python3 "$repo/bench/gpu_gemm_bench.py" table --heuristic="$dir/gemm_heuristic.jsonl" \
        --measured="$dir/gemm_measured.jsonl" --torch="$dir/gemm_torch.jsonl"; } >"$dir/gpu_gemm.md" || failed=1
  done
  cat "$dir/gpu_gemm.md"
  return $failed
}

# Ours and torch's per dtype, f16 first, each run's JSON lines and the table redone after every
# run (as run_gemm), so that a time limit stopping a later run leaves a whole dtype's comparison.
run_attention() {
  local dir=$out/attention failed=0 dtype impl header files=()
  mkdir -p "$dir"
  header=$(echo "# Fused attention at XLM-R's shapes: ours and PyTorch's SDPA backends"; describe_host
    echo "- command: tools/gpu_verify.sh attention --bundle=$bundle")
  for dtype in f16 bf16; do
    for impl in ours torch; do
      if [ "$impl" = torch ]; then
        python3 "$repo/bench/gpu_attention_bench.py" torch --dtype="$dtype" >"$dir/attention_torch_$dtype.jsonl" \
          2>"$dir/attention_torch_$dtype.log" || failed=1
      else
        "${run[@]}" bench/gpu_attention_bench --dtype="$dtype" >"$dir/attention_ours_$dtype.jsonl" \
          2>"$dir/attention_ours_$dtype.log" || failed=1
      fi
      files+=("$dir/attention_${impl}_$dtype.jsonl")
      { printf '%s\n\n' "$header"
        python3 "$repo/bench/gpu_attention_bench.py" table "${files[@]}"; } >"$dir/gpu_attention.md" || failed=1
    done
  done
  cat "$dir/gpu_attention.md"
  return $failed
}

case "$mode" in
  tests) run_tests ;;
  e2e) run_e2e ;;
  gemm) run_gemm ;;
  attention) run_attention ;;
  *) usage ;;
esac
