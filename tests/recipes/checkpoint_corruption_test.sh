#!/usr/bin/env bash
# Checkpoints that can be trusted (manifest.json, framework/io/file_manifest.h): corrupt bytes
# are detected before they are used, on short runs of the embedded model (40 steps, a
# checkpoint every 4). Comparisons are exact (cmp): the CPU trainer is bit-reproducible.
#   1. a run SIGKILLed once checkpoint-8 exists; in a copy of its directory one bit is flipped
#      in one file of the last checkpoint (every file, manifest.json included, each at a random
#      place in its header (the safetensors JSON header, or a text file's first 64 bytes), a
#      random place in its data (tensor data for the safetensors) and its last byte), or one file
#      is truncated; the same command then passes over that checkpoint in one line naming the
#      file, resumes from the one before, and ends with final weights byte-identical to an
#      uninterrupted run's (what it catches: any file left out of the manifest or of the check);
#   2. the only checkpoint corrupt in tensor data (it still parses): exit 2, one line naming the
#      file, nothing trained; --resume_from_checkpoint naming a corrupt checkpoint: exit 2, one
#      line; --resume_from_checkpoint=latest passes over it;
#   3. a checkpoint without manifest.json (written before manifests existed) resumes, with one
#      line saying it could not be verified, byte-identical;
#   4. a final model with a flipped bit: xlmr_predict and xlmr_finetune --model_dir stop with
#      exit 2 and one line naming the file.
# Places are drawn from $RANDOM seeded with XLMR_CORRUPT_SEED (printed; default fixed).
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
predict="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
cd "$TEST_TMPDIR"
seed=${XLMR_CORRUPT_SEED:-2929}
RANDOM=$seed
head -n 101 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
cmd=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir="$TEST_TMPDIR/cache" --max_steps=40
     --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --save_steps=4 --logging_steps=1)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# Sets `drawn` uniform in [$1, $2). A function that assigns, not $(draw ...): bash reseeds RANDOM
# in every subshell, so draws made in $(...) would not follow XLMR_CORRUPT_SEED.
draw() { drawn=$(( (RANDOM * 32768 + RANDOM) % ($2 - $1) + $1 )); }
size_of() { stat -c %s "$1"; }
flip_bit() {  # FILE OFFSET BIT
  local value
  value=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $(( value ^ (1 << $3) )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# The bytes of FILE's header: the safetensors JSON header, or a text file's first 64 bytes.
header_end() {
  case "$1" in
    *.safetensors) echo $(( 8 + $(od -An -tu8 -N8 "$1" | tr -d ' ') )) ;;
    *) local size; size=$(size_of "$1"); echo $(( size < 64 ? size / 2 : 64 )) ;;
  esac
}

"$finetune" "${cmd[@]}" --output_dir=whole > whole.log 2>&1 || { cat whole.log; fail "uninterrupted run"; exit 1; }
echo "seed $seed (XLMR_CORRUPT_SEED=$seed replays the places)"

# A killed run: at least two checkpoints, no final model (up to 3 tries: the run is short).
for try in 1 2 3; do
  rm -rf killed
  "$finetune" "${cmd[@]}" --output_dir=killed > killed.log 2>&1 &
  pid=$!
  while [ ! -d killed/checkpoint-8 ] && kill -0 "$pid" 2> /dev/null; do sleep 0.01; done
  kill -9 "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
  [ -d killed/checkpoint-8 ] && [ ! -e killed/model.safetensors ] && break
done
[ ! -e killed/model.safetensors ] || { fail "three kills came after the end: the test lost its point"; exit 1; }
rm -rf killed/*.tmp-*  # a save the kill interrupted: not what this test is about
mapfile -t checkpoints < <(ls -d killed/checkpoint-* | sort -t- -k2 -n)
last=$(basename "${checkpoints[-1]}") previous=$(basename "${checkpoints[-2]}")
echo "killed with ${checkpoints[*]}: corrupting $last, expecting a resume at $previous"

# CASE DESCRIPTION: the rerun of case/ (a copy of killed/ with $last corrupted) must pass over
# $last naming FILE, resume at $previous and end as the uninterrupted run.
rerun_passes_over() {
  local name=$1 file=$2 what=$3
  "$finetune" "${cmd[@]}" --output_dir=case > "$name.log" 2>&1
  local status=$?
  if [ "$status" -ne 0 ]; then cat "$name.log"; fail "$what: status $status"; return; fi
  # A flip inside a file name that manifest.json lists is reported as that (changed) name
  # missing, "listed in manifest.json": the manifest named as the culprit all the same.
  grep -q "^Passing over case/$last: case/$last/$file: " "$name.log" ||
    { [ "$file" = manifest.json ] && grep -q "^Passing over case/$last: .*: missing (listed in manifest.json)$" "$name.log"; } ||
    { cat "$name.log"; fail "$what: no line passing over case/$last naming $file"; return; }
  grep -q "^Checkpoint detected, resuming training at case/$previous " "$name.log" ||
    { cat "$name.log"; fail "$what: did not resume at $previous"; return; }
  for f in model.safetensors checkpoint-40/model.safetensors checkpoint-40/optimizer.safetensors; do
    cmp -s "whole/$f" "case/$f" || { fail "$what: $f differs from the uninterrupted run's"; return; }
  done
  echo "   $what: $(grep -m1 '^Passing over' "$name.log" | cut -c1-150)"
}

echo "1. one bit flipped in each file of $last, or one file truncated:"
for file in $(ls "killed/$last"); do
  for place in header data last; do
    rm -rf case && cp -r killed case
    path="case/$last/$file"
    size=$(size_of "$path")
    end=$(header_end "$path")
    case $place in
      header) draw 0 "$end"; offset=$drawn ;;
      data) draw "$end" $((size - 1)); offset=$drawn ;;
      last) offset=$((size - 1)) ;;
    esac
    bit=$((RANDOM % 8))
    flip_bit "$path" "$offset" "$bit"
    rerun_passes_over "flip_${file}_$place" "$file" "$file byte $offset ($place) bit $bit"
  done
done
rm -rf case && cp -r killed case
truncate -s -100 "case/$last/optimizer.safetensors"
rerun_passes_over truncated optimizer.safetensors "optimizer.safetensors 100 bytes shorter"
grep -q "(truncated)" truncated.log || fail "truncation: the line does not say truncated"

# 2. No earlier checkpoint to fall back on: stop, naming the file, nothing trained.
echo "2. the only checkpoint corrupt:"
rm -rf only && mkdir only && cp -r "killed/$last" only/ && cp killed/metrics.jsonl only/
size=$(size_of "only/$last/model.safetensors")
draw "$(header_end "only/$last/model.safetensors")" "$size"
flip_bit "only/$last/model.safetensors" "$drawn" 3
cp -r only only.before
"$finetune" "${cmd[@]}" --output_dir=only > stdout.txt 2> stderr.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] ||
   ! grep -q "holds no valid checkpoint-<step> to resume from (Passing over only/$last: only/$last/model.safetensors: CRC32C" stderr.txt; then
  cat stderr.txt; fail "the only checkpoint corrupt: status $status, expected 2 and one line naming model.safetensors"
fi
diff -r only only.before > /dev/null || fail "the only checkpoint corrupt: files changed"
echo "   status $status: $(cut -c1-160 stderr.txt)..."
"$finetune" "${cmd[@]}" --output_dir=only_named --resume_from_checkpoint="only/$last" > stdout.txt 2> stderr.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] ||
   ! grep -q "^xlmr_finetune: --resume_from_checkpoint=only/$last: only/$last/model.safetensors: CRC32C" stderr.txt; then
  cat stderr.txt; fail "--resume_from_checkpoint naming a corrupt checkpoint: status $status, expected 2 and one line"
fi
echo "   --resume_from_checkpoint=only/$last: status $status: $(cut -c1-120 stderr.txt)..."
rm -rf case && cp -r killed case && cp only/"$last"/model.safetensors "case/$last/"
"$finetune" "${cmd[@]}" --output_dir=case --resume_from_checkpoint=latest > latest.log 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q "^Passing over case/$last: case/$last/model.safetensors: CRC32C" latest.log &&
  cmp -s whole/model.safetensors case/model.safetensors ||
  { cat latest.log; fail "--resume_from_checkpoint=latest over a corrupt last checkpoint: status $status"; }
echo "   --resume_from_checkpoint=latest: passed over $last, status $status, final weights as uninterrupted"

# 3. Written before manifests: resumed, unverified, one line.
rm -rf case && cp -r killed case && rm case/checkpoint-*/manifest.json
"$finetune" "${cmd[@]}" --output_dir=case > legacy.log 2>&1
status=$?
[ "$status" -eq 0 ] || { cat legacy.log; fail "a checkpoint without manifest: status $status"; }
[ "$(grep -c "^case/$last has no manifest.json (written before checksums were recorded): its files could not be verified$" legacy.log)" -eq 1 ] ||
  { cat legacy.log; fail "a checkpoint without manifest: expected one line saying it could not be verified"; }
cmp -s whole/model.safetensors case/model.safetensors || fail "a checkpoint without manifest: final weights differ"
echo "3. $(grep -m1 'could not be verified' legacy.log)"

# 4. The final model: xlmr_predict and --model_dir verify it.
rm -rf final && cp -r whole final
size=$(size_of final/model.safetensors)
draw "$(header_end final/model.safetensors)" "$size"
flip_bit final/model.safetensors "$drawn" 5
"$predict" --model_dir=final --input_file=heldout.tsv --output_file=predictions.jsonl > stdout.txt 2> stderr.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || [ -e predictions.jsonl ] ||
   ! grep -q "^xlmr_predict: --model_dir=final: final/model.safetensors: CRC32C" stderr.txt; then
  cat stderr.txt; fail "xlmr_predict on a corrupt final model: status $status, expected 2, one line, no output"
fi
echo "4. xlmr_predict: status $status: $(cut -c1-120 stderr.txt)..."
"$finetune" "${cmd[@]}" --model_dir=final --output_dir=from_final > stdout.txt 2> stderr.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || [ -e from_final ] ||
   ! grep -q "^xlmr_finetune: --model_dir=final: final/model.safetensors: CRC32C" stderr.txt; then
  cat stderr.txt; fail "xlmr_finetune --model_dir on a corrupt final model: status $status, expected 2, one line"
fi
echo "   xlmr_finetune --model_dir: status $status"
"$predict" --model_dir=whole --input_file=heldout.tsv --output_file=predictions.jsonl > /dev/null 2>&1 ||
  fail "xlmr_predict on the intact final model failed"

[ "$failures" -eq 0 ] && echo "every corruption was named and passed over or refused"
exit "$failures"
