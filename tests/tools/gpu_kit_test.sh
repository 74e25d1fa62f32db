#!/usr/bin/env bash
# The GPU kit on a machine without a GPU (see tests/tools/BUILD):
# 1. `tools/gpu_verify.sh kit` packs prebuilt binaries (this test's fastbuild recipe binaries,
#    laid out as bazel-bin) with the device scripts into one archive: at most 48 MiB, and both
#    printed commands at most 2000 characters (the device runner's limits).
# 2. The printed commands run as the device runner would (from a folder holding the archive at
#    the path the command names, OUT set) with short part limits: every GPU part fails here (no
#    device, or no torch), which is expected; what must hold is what comes back: at most 8
#    files, at most two folders deep, each at most 16 MiB, names of letters, digits, '.', '_'
#    and '-' only, and summary.md, results.json and logs.tar.gz among them, the results naming
#    every part, none passed.
set -euo pipefail

runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}/${TEST_WORKSPACE:-xlmr_trainer}
tmp=${TEST_TMPDIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }

# A repository skeleton with the kit's scripts and data at their paths.
repo=$tmp/repo
for file in WORKSPACE tools/bundle.sh tools/gpu_verify.sh tools/gpu_verify_summary.py \
  tools/gpu_kit_report.py tools/check_hf_load.py tools/gpu_features.sh tools/gpu_features_summary.py \
  bench/gpu_bench.sh bench/gpu_bench_summary.py \
  bench/hf_train_gpu.py bench/gpu_gemm_bench.py bench/gpu_attention_bench.py bench/cuda_event_timing.py \
  recipes/data/langid/test.tsv recipes/data/langid/sentencepiece.bpe.model \
  tests/golden/tiny_bert/sequence_classification/{config.json,model.safetensors,tokenizer_config.json,vocab.txt} \
  tests/golden/tiny_roberta/model/{config.json,merges.txt,model.safetensors,tokenizer_config.json,vocab.json} \
  tests/golden/tiny_camembert/model/{config.json,model.safetensors,sentencepiece.bpe.model}; do
  mkdir -p "$repo/$(dirname "$file")"
  cp -L "$runfiles/$file" "$repo/$file"
done
# bazel-bin's layout for the two binaries: each one and a runfiles tree holding it (this test's
# own tree holds both binaries and their data).
bin=$tmp/bin
mkdir -p "$bin/recipes"
for binary in recipes/xlmr_finetune recipes/xlmr_predict; do
  ln -s "$runfiles/$binary" "$bin/$binary"
  ln -s "${RUNFILES_DIR:-$TEST_SRCDIR}" "$bin/$binary.runfiles"
done

# 1. The kit.
archive=$repo/.bundle/xlmr_kit.tar.gz
"$repo/tools/gpu_verify.sh" kit --bin_dir="$bin" \
  --targets=//recipes:xlmr_finetune,//recipes:xlmr_predict --archive="$archive" >"$tmp/kit.out" 2>"$tmp/kit.err" ||
  { cat "$tmp/kit.err" "$tmp/kit.out"; fail "gpu_verify.sh kit failed"; }
cat "$tmp/kit.out"
bytes=$(stat -c %s "$archive")
[ "$bytes" -le $((48 * 1048576)) ] || fail "archive is $bytes bytes, over 48 MiB"
commands=$repo/.bundle/xlmr_kit.commands
[ "$(wc -l <"$commands")" -eq 2 ] || fail "expected two commands in $commands"
while IFS= read -r command; do
  [ ${#command} -le 2000 ] || fail "command of ${#command} characters: $command"
  [[ $command == *".bundle/xlmr_kit.tar.gz"* ]] || fail "command does not name the archive by its repository path"
  grep -qxF "$command" "$tmp/kit.out" || fail "the printed output does not hold the command exactly: $command"
done <"$commands"

# Checks what a device command left under OUT against the runner's limits.
check_returned() {  # out_dir parts...
  local out_dir=$1 path name count depth
  shift
  count=$(find "$out_dir" -type f | wc -l)
  echo "returned files:"
  (cd "$out_dir" && find . -type f -printf '  %P %s bytes\n')
  [ "$count" -le 8 ] || fail "$count files under OUT (at most 8 come back)"
  [ -z "$(find "$out_dir" ! -type f ! -type d)" ] || fail "links or special files under OUT"
  while IFS= read -r path; do
    depth=$(awk -F/ '{print NF - 1}' <<<"$path")
    [ "$depth" -le 2 ] || fail "$path is $depth folders deep (at most 2 come back)"
    for name in ${path//\// }; do
      [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || fail "'$path': names may hold letters, digits, '.', '_', '-' only"
    done
    [ "$(stat -c %s "$out_dir/$path")" -le $((16 * 1048576)) ] || fail "$path is over 16 MiB"
  done < <(cd "$out_dir" && find . -mindepth 1 -printf '%P\n')
  for name in summary.md results.json logs.tar.gz; do
    [ -s "$out_dir/$name" ] || fail "no $name under OUT"
  done
  tar tzf "$out_dir/logs.tar.gz" >/dev/null || fail "logs.tar.gz is not a readable archive"
  grep -q '^- GPU' "$out_dir/summary.md" || fail "summary.md names no GPU line"
  if [ "$1" = tests ]; then
    grep -q '^## Features, GPU against the CPU oracle' "$out_dir/summary.md" || fail "summary.md has no features section"
    # The gemm part's table is written even when every run failed (no binary in this bundle, no GPU).
    grep -q '^| size | linear | product |' "$out_dir/summary.md" || fail "summary.md has no GEMM table"
    # So is the attention part's, a row per expected shape with blank figures, and the goal's
    # verdict unknown.
    grep -q '^## Fused attention against PyTorch' "$out_dir/summary.md" || fail "summary.md has no attention section"
    grep -qxF '| base | 16 | 512 |  |  |  |  |  |  |  |  |' "$out_dir/summary.md" ||
      fail "summary.md has no attention table"
    grep -qxF -- '- large bf16, seq 512: goal unknown (no figure of ours)' "$out_dir/summary.md" ||
      fail "summary.md does not call the attention goal unknown"
  fi
  python3 - "$out_dir/results.json" "$@" <<'PYTHON' || fail "results.json does not report the parts"
import json, sys
results = json.load(open(sys.argv[1]))
for name in sys.argv[2:]:
    part = results["parts"][name]
    assert part["status"] in ("failed", "timed out"), (name, part)  # no GPU here
assert results["passed"] is False
assert "cuda" in results["host"] and "nvidia_smi" in results["host"]
if "attention" in sys.argv[2:]:  # every run named, each with no records here
    assert results["attention"] == {run: [] for run in ("ours_f16", "torch_f16", "ours_bf16", "torch_bf16")}, \
        results["attention"]
PYTHON
}

# 2. Both commands, as the runner runs them: from the repository copy, archive carried.
device=$tmp/device
mkdir -p "$device/.bundle"
cp "$archive" "$device/.bundle/"
mode=0
while IFS= read -r command; do
  mode=$((mode + 1))
  out=$tmp/out_$mode
  mkdir -p "$out"
  start=$SECONDS
  status=0
  (cd "$device" && OUT=$out TMPDIR=$tmp XLMR_KIT_SECONDS=tests:20,e2e:10,features:20,gemm:10,attention:10,bench:20,long:20 \
    bash -c "$command") >"$tmp/device_$mode.log" 2>&1 || status=$?
  echo "command $mode: exit $status after $((SECONDS - start)) s"
  [ "$status" -ne 0 ] || { cat "$tmp/device_$mode.log"; fail "command $mode passed on a machine without a GPU"; }
  [ $((SECONDS - start)) -le 120 ] || fail "command $mode outlived its part limits (10-20 s each)"
  if [ $mode -eq 1 ]; then check_returned "$out" tests e2e features gemm attention bench; else check_returned "$out" long; fi
done <"$commands"
echo "PASS"
