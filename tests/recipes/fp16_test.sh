#!/usr/bin/env bash
# --fp16 end to end on the embedded default:
#  1. a forced overflow (--loss_scale_init=1e38): the first steps are skipped, each halving the
#     scale, then training proceeds (metrics.jsonl shows skipped and loss_scale);
#  2. fp16 against fp32 from the same seed: the loss curves agree (mean |difference| over the
#     200 steps <= 0.03: fp16 rounds every matrix product to 11-bit mantissas, which moves
#     individual losses by ~1e-3 and the trajectory slowly apart) and the evaluation accuracy
#     on 400 held-out rows differs by at most 0.04 (4 examples in 100, a few flips of borderline
#     predictions); the fp16 activation peak is at most 0.75 of fp32's (every matrix product is
#     stored in fp16; the residual stream, LayerNorm inputs and attention probabilities stay fp32
#     as under PyTorch autocast).
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
data_dir="$RUNFILES_DIR/xlmr_trainer/recipes/data/langid"
head -n 401 "$data_dir/dev.tsv" > heldout.tsv
common=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir=cache --logging_steps=50 --seed=3)

"$finetune" "${common[@]}" --fp16 --loss_scale_init=1e38 --max_steps=120 --output_dir=overflow > overflow.log 2>&1 \
  || { cat overflow.log; exit 1; }
# Every value read from metrics.jsonl goes through these: a missing key or line stops the test
# (an empty string would otherwise compare as 0 in awk, and a sed without -n would pass the
# whole line through).
die() { echo "$*" >&2; exit 1; }
python_free_field() {  # FILE STEP FIELD -> value of FIELD on the train line of STEP; fails if absent
  local value
  value=$(grep "\"type\":\"train\",\"step\":$2," "$1" | sed -nE "s/.*\"$3\":([^,}]*).*/\1/p")
  [ "$(printf '%s\n' "$value" | grep -c .)" -eq 1 ] || die "$1: no single $3 on the train line of step $2"
  echo "$value"
}
numbers() {  # FILE FIELD COUNT -> FIELD of every train line; fails unless COUNT numbers
  local values
  values=$(grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":(-?[0-9][0-9.e+-]*)[,}].*/\1/p")
  [ "$(printf '%s\n' "$values" | grep -c .)" -eq "$3" ] || die "$1: expected $3 numeric $2 values"
  echo "$values"
}
[ "$(python_free_field overflow/metrics.jsonl 1 skipped)" = "true" ] || { echo "step 1 not skipped"; exit 1; }
[ "$(python_free_field overflow/metrics.jsonl 2 skipped)" = "true" ] || { echo "step 2 not skipped"; exit 1; }
s1=$(python_free_field overflow/metrics.jsonl 1 loss_scale) || exit 1
s2=$(python_free_field overflow/metrics.jsonl 2 loss_scale) || exit 1
awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(a > 9e37 && b == a / 2) }' || { echo "scale $s1 -> $s2 is not a halving from 1e38"; exit 1; }
[ "$(python_free_field overflow/metrics.jsonl 120 skipped)" = "false" ] || { echo "still skipping at step 120"; exit 1; }
skipped=$(grep -c '"skipped":true' overflow/metrics.jsonl)
echo "forced overflow: $skipped skipped steps, scale $s1 -> $(python_free_field overflow/metrics.jsonl 120 loss_scale)"

for mode in fp32 fp16; do
  flags=(); [ "$mode" = fp16 ] && flags=(--fp16)
  "$finetune" "${common[@]}" "${flags[@]}" \
    --max_steps=200 --output_dir="$mode" > "$mode.log" 2>&1 || { cat "$mode.log"; exit 1; }
  numbers "$mode/metrics.jsonl" loss 200 > "$mode.losses" || exit 1
  numbers "$mode/metrics.jsonl" peak_activation_bytes 200 | sort -n | tail -1 > "$mode.peak" || exit 1
  sed -nE 's/.*"eval_accuracy": ([0-9.e-]+).*/\1/p' "$mode/eval_results.json" > "$mode.accuracy"
  [ "$(grep -c . "$mode.accuracy")" -eq 1 ] || die "$mode/eval_results.json: no eval_accuracy"
done
paste fp32.losses fp16.losses | awk '{ d = $1 - $2; s += (d < 0 ? -d : d); n++ }
  END { printf "mean |loss fp16 - fp32| over %d steps: %.5f\n", n, s / n; exit !(n == 200 && s / n <= 0.03) }'
awk -v a="$(cat fp32.accuracy)" -v b="$(cat fp16.accuracy)" 'BEGIN { d = a - b; if (d < 0) d = -d;
  printf "eval accuracy fp32 %.4f fp16 %.4f\n", a, b; exit !(d <= 0.04) }'
awk -v a="$(cat fp32.peak)" -v b="$(cat fp16.peak)" 'BEGIN {
  printf "activation peak fp32 %d fp16 %d ratio %.3f\n", a, b, b / a; exit !(b / a <= 0.75) }'
