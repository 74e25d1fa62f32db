#!/usr/bin/env bash
# What a refactoring must not change, in one file to diff: the checksums of everything the
# embedded default writes (fp32, fp16, bf16), of xlmr_predict's predictions, and of the token
# cache, plus the instructions a 3-step run on 200 rows executes (callgrind, whole process).
#
#   bench/behaviour_fingerprint.sh CHECKOUT OUT_FILE
#
# CHECKOUT is a source tree whose bazel-bin/recipes holds xlmr_finetune and xlmr_predict built
# with `bazel build -c opt`; run it for the commit before and after, then `diff` the two files.
# Wall-clock fields are left out (metrics.jsonl's step_seconds, tokens_per_second,
# elapsed_seconds; trainer_state.json's train_runtime and *_per_second; manifest.json's entry for
# trainer_state.json), so losses, norms, counts and every weight are compared. The
# instruction count is load-independent; two runs of one binary differ by about 0.002%.
set -euo pipefail

checkout=$(cd "$1" && pwd)
out_file=$(readlink -f "$2")
finetune=$checkout/bazel-bin/recipes/xlmr_finetune
predict=$checkout/bazel-bin/recipes/xlmr_predict
langid=$checkout/recipes/data/langid
for binary in "$finetune" "$predict"; do
  [ -x "$binary" ] || { echo "$binary: missing; run bazel build -c opt //recipes:all there" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# sha256 of one file; JSON lines without their wall-clock fields.
checksum() {
  python3 - "$1" <<'EOF'
import hashlib, json, os, sys
path = sys.argv[1]
data = open(path, "rb").read()
# Wall-clock fields: metrics.jsonl's, and HF's train_runtime / *_per_second in trainer_state.json.
def timeless(value):
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items()
                if k not in {"step_seconds", "tokens_per_second", "elapsed_seconds", "train_seconds"}
                and not k.endswith("_runtime") and not k.endswith("_per_second")}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value
name = os.path.basename(path)
if name == "metrics.jsonl":
    data = "\n".join(json.dumps(timeless(json.loads(line)), sort_keys=True)
                     for line in data.decode().splitlines()).encode()
elif name == "trainer_state.json":
    data = json.dumps(timeless(json.loads(data)), sort_keys=True).encode()
elif name == "manifest.json":  # its trainer_state.json entry checksums the wall-clock fields
    manifest = json.loads(data)
    manifest["files"] = [f for f in manifest["files"] if f["name"] != "trainer_state.json"]
    data = json.dumps(manifest, sort_keys=True).encode()
print(hashlib.sha256(data).hexdigest())
EOF
}

fingerprint_dir() {
  local label=$1 dir=$2
  (cd "$dir" && find . -type f | LC_ALL=C sort) | while read -r file; do
    echo "$label ${file#./} $(checksum "$dir/$file")"
  done
}

export OPENBLAS_NUM_THREADS=2
{
  "$finetune" --output_dir=fp32 --cache_dir=cache > fp32.log 2>&1
  fingerprint_dir fp32 fp32
  fingerprint_dir token_cache cache
  "$finetune" --output_dir=fp16 --cache_dir=cache --fp16 --max_steps=300 > fp16.log 2>&1
  fingerprint_dir fp16 fp16
  "$finetune" --output_dir=bf16 --cache_dir=cache --bf16 --max_steps=300 > bf16.log 2>&1
  fingerprint_dir bf16 bf16
  "$predict" --model_dir=fp32 --input_file="$langid/test.tsv" --output_file=predictions.jsonl \
    > predict.log 2>&1
  echo "predict predictions.jsonl $(checksum predictions.jsonl)"
  # The instruction count on 200 rows (train, eval and test) and 3 steps: the whole data set
  # takes over an hour under callgrind on 2 cores.
  head -n 201 "$langid/train.tsv" > small.tsv
  OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=callgrind.out \
    "$finetune" --train_file=small.tsv --eval_file=small.tsv --test_file=small.tsv \
    --output_dir=callgrind --cache_dir=fresh_cache --max_steps=3 --save_strategy=no \
    --eval_strategy=no > callgrind.log 2>&1
  echo "callgrind instructions $(grep -m1 '^summary:' callgrind.out | cut -d' ' -f2)"
} > "$out_file"
echo "wrote $out_file ($(wc -l < "$out_file") lines)"
