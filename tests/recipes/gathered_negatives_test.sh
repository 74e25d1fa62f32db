#!/usr/bin/env bash
# In-batch negatives gathered across ranks (--gather_across_devices, issue 43): `mpirun -np 2`
# with per-device batch 4 trains the same model as one process with batch 8, as
# sentence-transformers' gather_across_devices makes it (every anchor's candidates are both
# ranks' texts, gradients flowing to them). On 40 rows of the embedded bitext data (dropout 0,
# learning rate 1e-3, --adam_epsilon=1e-4 as in data_parallel_test.sh), in four variants:
#   plain, 4 steps; the symmetric loss; --gradient_accumulation_steps=2 (global batch 16, 2 steps);
#   19 rows for one epoch, whose last global batch of 3 rows falls to rank 0 alone (rank 1's
#   micro-batch is empty, yet it takes part in the gather).
# Checked for each pair: per-step loss and grad_norm within 1e-5 relative (fp32; the global
# loss is the same function, its products summed in another order; the similarity scale 20
# multiplies the cosines' rounding: measured 3e-7 on full batches, 2.7e-6 on the partial batch's
# step, whose 3-anchor loss of 0.82 is the smallest) and the final weights within 2e-6 (measured
# 1.2e-7 .. 8.2e-7, a token-type embedding whose gradient is rounding noise). And the same mpirun
# without the flag (each rank its own negatives: a different loss) differs from the one process
# by more than 1e-4 in loss (measured 0.37 relative) and weights (4.5e-3): the comparison can fail.
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
compare="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
bitext="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no network discovery: CI machines have no network.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
head -n 40 "$bitext" > train40.jsonl
head -n 19 "$bitext" > train19.jsonl
failures=0
fail() { echo "FAILED ($variant): $*"; failures=$((failures + 1)); }
field() { grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":([^,}]*).*/\1/p"; }
# worst RUN_A RUN_B FIELD: the largest relative difference of FIELD over the train lines.
worst() {
  paste <(field "$1/metrics.jsonl" "$3") <(field "$2/metrics.jsonl" "$3") |
    awk '{ d = $1 - $2; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1; r = d / m; if (r > w) w = r } END { printf "%.3g", w }'
}
# run_pair VARIANT FLAGS...: one process with batch 8 against two ranks with batch 4 each.
run_pair() {
  variant=$1; shift
  local common=(--task=sentence_embedding --dropout=0 --learning_rate=1e-3 --adam_epsilon=1e-4 --logging_steps=1
                --save_strategy=no --cache_dir=cache "$@")
  rm -rf one two local
  "$finetune" "${common[@]}" --per_device_train_batch_size=8 --output_dir=one > one.log 2>&1 ||
    { cat one.log; fail "one process"; return; }
  mpirun -np 2 "$finetune" "${common[@]}" --per_device_train_batch_size=4 --gather_across_devices --output_dir=two \
    > two.log 2>&1 || { cat two.log; fail "mpirun -np 2 --gather_across_devices"; return; }
  local steps; steps=$(field one/metrics.jsonl loss | wc -l)
  [ "$steps" -ge 2 ] && [ "$(field two/metrics.jsonl loss | wc -l)" -eq "$steps" ] || { fail "step counts differ"; return; }
  for name in loss grad_norm; do
    local w; w=$(worst one two "$name")
    echo "  $variant: $name max relative difference $w over $steps steps (tolerance 1e-5)"
    awk -v w="$w" 'BEGIN { exit !(w <= 1e-5) }' || fail "$name differs by $w"
  done
  echo -n "  $variant: weights: "
  "$compare" one/model.safetensors two/model.safetensors --tolerance=2e-6 || fail "the weights differ"
}
run_pair plain --train_file=train40.jsonl --max_steps=4
# The control: without the flag each rank's anchors see only its own texts.
mpirun -np 2 "$finetune" --task=sentence_embedding --dropout=0 --learning_rate=1e-3 --adam_epsilon=1e-4 \
  --logging_steps=1 --save_strategy=no --cache_dir=cache --train_file=train40.jsonl --max_steps=4 \
  --per_device_train_batch_size=4 --output_dir=local > local.log 2>&1 || { cat local.log; fail "control run"; }
variant=control
control=$(worst one local loss)
echo "  control (own negatives only): loss max relative difference $control (must exceed 1e-4)"
awk -v w="$control" 'BEGIN { exit !(w > 1e-4) }' || fail "the control does not differ: the comparison cannot fail"
"$compare" one/model.safetensors local/model.safetensors --tolerance=1e-4 > control.txt 2>&1 &&
  fail "the control's weights equal one process's: $(cat control.txt)"
run_pair symmetric --train_file=train40.jsonl --max_steps=4 --embedding_loss=multiple_negatives_symmetric_ranking
run_pair accumulation --train_file=train40.jsonl --max_steps=2 --gradient_accumulation_steps=2
run_pair partial_last_batch --train_file=train19.jsonl --num_train_epochs=1
[ "$failures" -eq 0 ] && echo "gathered in-batch negatives on 2 ranks train as one process on the global batch"
exit "$failures"
