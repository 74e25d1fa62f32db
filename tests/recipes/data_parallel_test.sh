#!/usr/bin/env bash
# Data-parallel training end to end: `mpirun -np 2` with per-device batch 4 trains the same
# model as one process with batch 8 (the global batch is the same, split by rank), in four
# variants: plain, --gradient_accumulation_steps=2 (global batch 16), --gradient_checkpointing
# and --fp16, token classification packed and padded, and two on 27 rows, where the last global batch of an epoch is partial (8, 8, 8,
# 3; with accumulation 16, 11): its 3 examples all fall to rank 0 and rank 1 runs an empty
# micro-batch (with accumulation, rank 1's second micro-batch is empty), yet the step must be
# the mean over those examples on both. Each pair runs 4 optimizer steps on 300 rows of the embedded data, dropout 0,
# learning rate 1e-3, and is compared on:
#   - the final model.safetensors (compare_models): max |difference| <= 1e-6 in fp32 (measured
#     1.2e-7: one ulp of a LayerNorm weight near 1, from summing the batch in another order
#     across ranks and padding lengths), <= 2e-5 with --fp16 (measured 1.9e-6: an fp32 sum in
#     another order now and then rounds to the neighbouring fp16 value, 2^-11 relative). A wrong
#     gradient (a rank updating from its own half of the batch) moves weights by ~1e-3..5e-3 at
#     this learning rate. --adam_epsilon=1e-4 for the same reason as in
#     tests/framework/train/accumulation_test.cc: with eps 1e-8 an element whose gradient is
#     rounding noise (the attention key bias, analytically zero; embedding rows of rare tokens)
#     takes a full-size step of random sign, so correct runs would differ by ~lr there;
#   - eval_results.json: evaluation sharded over the ranks covers the same examples and gives
#     the same eval_loss (within the loss tolerance: each rank pads its own slice);
#   - metrics.jsonl: per-step loss and grad_norm within 1e-6 relative (fp32; measured ~1e-8)
#     or 1e-4 / 1e-3 (fp16; measured 2e-6 / 2e-5), no step skipped, and allreduce_calls equal to
#     4 x step on both (4 buckets per optimizer step: head, 2 blocks, embeddings; none on the
#     first micro-step when accumulating);
#   - the mpirun log: rank 0 alone prints (one "step 4/4" line, one "done:" line) and it reports
#     that the weights are bitwise identical on both ranks at the start and after step 4 (the
#     trainer's replica check, which fails the run otherwise).
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
compare="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
train_tsv="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
ner_conll="$(cd "$(dirname "$4")" && pwd)/$(basename "$4")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no network discovery: CI machines have no network.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
head -n 301 "$train_tsv" > train.tsv
{ head -n 1 "$train_tsv"; sed -n '302,401p' "$train_tsv"; } > dev.tsv
common=(--train_file=train.tsv --eval_file=dev.tsv --max_steps=4 --dropout=0 --learning_rate=1e-3
        --adam_epsilon=1e-4 --logging_steps=1 --cache_dir=cache)

field() {  # FILE FIELD -> the FIELD of every train line, one per line (nothing where it is absent)
  grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":([^,}]*).*/\1/p"
}
failures=0
fail() { echo "FAILED ($variant): $*"; failures=$((failures + 1)); }

# FIELD TOLERANCE: largest relative difference of FIELD between the two runs, checked.
compare_metric() {
  local worst run
  for run in one two; do  # a missing field must not compare as equal
    [ "$(field $run/metrics.jsonl "$1" | grep -cE '^-?[0-9.]+(e[-+]?[0-9]+)?$')" -eq 4 ] ||
      { fail "$run: $1 is not a number on each of the 4 train lines"; return; }
  done
  worst=$(paste <(field one/metrics.jsonl "$1") <(field two/metrics.jsonl "$1") |
    awk '{ d = $1 - $2; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1; r = d / m; if (r > w) w = r } END { printf "%.3g", w }')
  echo "  $1: max relative difference $worst (tolerance $2)"
  awk -v w="$worst" -v t="$2" 'BEGIN { exit !(w <= t) }' || fail "$1 differs by $worst"
}

run_variant() {  # NAME WEIGHT_TOL LOSS_TOL NORM_TOL FLAGS...
  variant=$1 weight_tol=$2 loss_tol=$3 norm_tol=$4
  shift 4
  rm -rf one two
  "$finetune" "${common[@]}" "$@" --per_device_train_batch_size=8 --output_dir=one > one.log 2>&1 || {
    cat one.log; fail "one process"; return; }
  mpirun --oversubscribe -np 2 "$finetune" "${common[@]}" "$@" --per_device_train_batch_size=4 \
    --output_dir=two > two.log 2>&1 || { cat two.log; fail "mpirun -np 2"; return; }
  echo "$variant:"
  echo -n "  model: " && "$compare" one/model.safetensors two/model.safetensors --tolerance="$weight_tol" ||
    fail "final weights differ by more than $weight_tol"
  compare_metric loss "$loss_tol"
  compare_metric grad_norm "$norm_tol"
  for run in one two; do
    [ "$(field $run/metrics.jsonl allreduce_calls | tr '\n' ' ')" = "4 8 12 16 " ] ||
      fail "$run: allreduce_calls $(field $run/metrics.jsonl allreduce_calls | tr '\n' ' '), expected 4 8 12 16"
    [ "$(field $run/metrics.jsonl skipped | sort -u)" = "false" ] || fail "$run: a step was skipped"
  done
  echo "  allreduce_calls per step (both runs): $(field two/metrics.jsonl allreduce_calls | tr '\n' ' ')"
  # Evaluation is sharded over the ranks and gathered: the same examples, the same loss.
  local key values
  for key in eval_examples eval_loss; do
    values=$(for run in one two; do sed -nE "s/.*\"$key\": ([-0-9.e+]+).*/\1/p" $run/eval_results.json; done)
    [ "$(echo "$values" | grep -c .)" -eq 2 ] || { fail "$key missing from eval_results.json"; continue; }
    echo "  $key: $(echo "$values" | tr '\n' ' ')"
    echo "$values" | paste -s | awk -v t="$loss_tol" '{ d = $1 - $2; if (d < 0) d = -d; exit !(d <= t * $1) }' ||
      fail "$key differs between one process and two ranks"
  done
  [ "$(grep -c 'step 4/4' two.log)" -eq 1 ] || fail "expected one progress line per step (rank 0 only)"
  [ "$(grep -c '^done:' two.log)" -eq 1 ] || fail "expected one done line (rank 0 only)"
  for when in "at the start of training" "after step 4"; do
    grep -q "weights identical on all 2 ranks $when" two.log || fail "no replica check $when"
  done
}

run_variant plain 1e-6 1e-6 1e-6
# A partial last batch with empty micro-batches on rank 1 (see the top), evaluated on its own
# rows (27 rows do not hold every label of dev.tsv); examples_seen proves
# the partial batches happened: 8+8+8+3 and 16+11+16+11.
head -n 28 "$train_tsv" > train27.tsv
run_variant partial 1e-6 1e-6 1e-6 --train_file=train27.tsv --eval_file=train27.tsv
[ "$(field two/metrics.jsonl examples | tr '\n' ' ')" = "8 16 24 27 " ] || fail "examples $(field two/metrics.jsonl examples | tr '\n' ' '), expected 8 16 24 27"
run_variant partial_accumulation 1e-6 1e-6 1e-6 --train_file=train27.tsv --eval_file=train27.tsv --gradient_accumulation_steps=2
[ "$(field two/metrics.jsonl examples | tr '\n' ' ')" = "16 27 43 54 " ] || fail "examples $(field two/metrics.jsonl examples | tr '\n' ' '), expected 16 27 43 54"
run_variant accumulation 1e-6 1e-6 1e-6 --gradient_accumulation_steps=2
run_variant checkpointing 1e-6 1e-6 1e-6 --gradient_checkpointing
run_variant fp16 2e-5 1e-4 1e-3 --fp16
# Token classification, whose loss is the mean over the global batch's labelled tokens (which
# only the ranks together know), on both batch forms: packed (--padding_free, the default) and
# padded. 200 sentences for training, 60 for evaluation (blank-line separated CoNLL).
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 200' "$ner_conll" > ner_train.conll
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR > 200 && NR <= 260' "$ner_conll" > ner_dev.conll
for form in packed padded; do
  run_variant "token_classification_$form" 1e-6 1e-6 1e-6 --task=token_classification \
    --train_file=ner_train.conll --eval_file=ner_dev.conll --padding_free=$([ $form = packed ] && echo true || echo false)
done
[ "$failures" -eq 0 ] && echo "data-parallel runs match the single-process runs"
exit "$failures"
