#!/usr/bin/env bash
# --bf16 end to end on the embedded default:
#  1. no loss scaling: with --loss_scale_init=1e38 (which under --fp16 overflows and skips the
#     first steps) every step reports loss_scale 1 and none is skipped;
#  2. bf16 against fp32 from the same seed: the loss curves agree (mean |difference| over the
#     200 steps <= 0.05, measured 0.013: bf16 rounds every matrix product to 8-bit mantissas,
#     8x fp16's rounding; fp16_test.sh allows 0.03; measured ratio of activation peaks 0.575) and the activation peak is at most 0.75 of
#     fp32's (the matrix products are stored in bf16, as under fp16);
#  3. the saved model is fp32 (as HF's Trainer with bf16=True saves it), and xlmr_predict --bf16
#     reads it; --fp16 --bf16 together are refused (finetune_bad_input_test.sh).
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
predict="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
cd "$TEST_TMPDIR"
data_dir="$RUNFILES_DIR/xlmr_trainer/recipes/data/langid"
head -n 201 "$data_dir/dev.tsv" > heldout.tsv
steps=200
common=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir=cache --logging_steps=20 --seed=3)
die() { echo "$*" >&2; exit 1; }
numbers() {  # FILE FIELD COUNT -> FIELD of every train line; fails unless COUNT numbers
  local values
  values=$(grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":(-?[0-9][0-9.e+-]*)[,}].*/\1/p")
  [ "$(printf '%s\n' "$values" | grep -c .)" -eq "$3" ] || die "$1: expected $3 numeric $2 values"
  echo "$values"
}

for mode in fp32 bf16; do
  flags=(); [ "$mode" = bf16 ] && flags=(--bf16 --loss_scale_init=1e38)
  "$finetune" "${common[@]}" "${flags[@]}" \
    --max_steps=$steps --output_dir="$mode" > "$mode.log" 2>&1 || { cat "$mode.log"; exit 1; }
  numbers "$mode/metrics.jsonl" loss $steps > "$mode.losses" || exit 1
  numbers "$mode/metrics.jsonl" peak_activation_bytes $steps | sort -n | tail -1 > "$mode.peak" || exit 1
done

scales=$(numbers bf16/metrics.jsonl loss_scale $steps) || exit 1
printf '%s\n' "$scales" | awk '$1 != 1 { bad++ } END { exit bad > 0 }' \
  || die "bf16: loss_scale not 1 on every step: $(printf '%s ' $scales | head -c 200)"
! grep -q '"skipped":true' bf16/metrics.jsonl || die "bf16: a step was skipped (loss scaling on?)"
echo "bf16: $steps steps, loss_scale 1 on each, none skipped"

paste fp32.losses bf16.losses | awk -v steps=$steps '{ d = $1 - $2; s += (d < 0 ? -d : d); n++ }
  END { printf "mean |loss bf16 - fp32| over %d steps: %.5f\n", n, s / n; exit !(n == steps && s / n <= 0.05) }'
cmp -s fp32.losses bf16.losses && die "bf16 losses equal fp32's bit for bit: bf16 not in effect"
awk -v a="$(cat fp32.peak)" -v b="$(cat bf16.peak)" 'BEGIN {
  printf "activation peak fp32 %d bf16 %d ratio %.3f\n", a, b, b / a; exit !(b / a <= 0.75) }'

# The saved weights: F32 tensors only (the header is JSON after an 8-byte length).
header=$(head -c 65536 bf16/model.safetensors | tr -d '\000' | tr ',' '\n')
# Here-strings, not pipes: grep -q exits at its first match, and under pipefail the writer's
# SIGPIPE would fail the check at random.
grep -q '"dtype":"F32"' <<< "$header" || die "bf16/model.safetensors: no F32 tensor"
! grep -Eq '"dtype":"(BF16|F16)"' <<< "$header" || die "bf16/model.safetensors: 16-bit tensors saved"

"$predict" --model_dir=bf16 --input_file=heldout.tsv --output_file=predictions.jsonl --bf16 \
  > predict.log 2>&1 || { cat predict.log; exit 1; }
[ "$(grep -c . predictions.jsonl)" -ge 200 ] || die "xlmr_predict --bf16: too few predictions"
echo "xlmr_predict --bf16: $(grep -c . predictions.jsonl) lines"
