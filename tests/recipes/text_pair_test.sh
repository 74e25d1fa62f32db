#!/usr/bin/env bash
# --text_pair_column end to end. Training data: pairs (text of row i, text of row i+1) of the
# embedded langid rows, labelled with the second text's language. Checks:
#  1. xlmr_finetune trains on pairs (5 steps) and evaluates on 40 pair rows;
#  2. xlmr_predict --text_pair_column on those rows gives the trained model's probabilities: the
#     mean -log p(label) and the accuracy recomputed from its output equal the eval_loss and
#     eval_accuracy of eval_results.json (tolerance 1e-12 relative, as in predict_test.sh: same
#     model, same single batch), so trainer and predictor build the same pair inputs;
#  3. the second text reaches the model: the same rows with other second texts give other
#     probabilities on every row, and so does predicting without --text_pair_column;
#  4. a --text_pair_column that names no column stops both binaries with exit status 2 and one
#     line naming the flag.
# Args: xlmr_finetune, xlmr_predict, the embedded train split.
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
train_tsv=$(absolute "$3")
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }

# text, second, label: row i's text, row i+1's text and language.
awk -F'\t' -v OFS='\t' 'NR == 1 { print "text", "second", "label"; next }
  NR > 2 { print previous, $1, $2 } { previous = $1 }' <(head -n 402 "$train_tsv") > pairs.tsv
head -n 41 pairs.tsv > eval.tsv
# The same first texts with other second texts (those of 50 rows further on).
paste <(cut -f1 eval.tsv) <(head -n 1 pairs.tsv | cut -f2; sed -n '52,91p' pairs.tsv | cut -f2) \
  <(cut -f3 eval.tsv) > swapped.tsv
[ "$(wc -l < pairs.tsv)" -eq 401 ] && [ "$(wc -l < swapped.tsv)" -eq 41 ] || fail "test data"

"$finetune" --train_file=pairs.tsv --text_pair_column=second --eval_file=eval.tsv --test_file=eval.tsv \
  --max_steps=5 --learning_rate=1e-3 --per_device_eval_batch_size=64 --output_dir=model --cache_dir=cache \
  > finetune.log 2>&1 || { cat finetune.log; fail "xlmr_finetune --text_pair_column=second"; }

run_predict() {  # INPUT OUTPUT [FLAGS...]
  local input=$1 output=$2; shift 2
  "$predict" --model_dir=model --input_file="$input" --output_file="$output" --per_device_eval_batch_size=64 "$@" \
    2> predict.log || { cat predict.log; fail "xlmr_predict on $input $*"; }
  [ "$(wc -l < "$output")" -eq 40 ] || fail "$output: expected 40 lines"
}
run_predict eval.tsv pred.jsonl --text_pair_column=second
run_predict swapped.tsv pred_swapped.jsonl --text_pair_column=second
# The model records --text_pair_column=second (prediction_args.json); an empty one means none.
run_predict eval.tsv pred_single.jsonl --text_pair_column=

labels=$(sed -n '/"id2label"/,/}/p' model/config.json | grep -o '"[0-9]*": "[^"]*"' |
         sort -t'"' -k2,2n | sed 's/.*: "\(.*\)"/\1/' | tr '\n' ' ')
eval_field() { sed -nE "s/.*\"$1\": ([-0-9.e+]+).*/\1/p" model/eval_results.json; }
eval_loss=$(eval_field eval_loss)
eval_accuracy=$(eval_field eval_accuracy)
[ -n "$eval_loss" ] && [ -n "$eval_accuracy" ] || { cat model/eval_results.json; fail "no eval_loss / eval_accuracy"; }
paste -d'\t' <(awk -F'\t' 'NR > 1 { print $3 }' eval.tsv) pred.jsonl | awk -F'\t' -v labels="$labels" \
    -v eval_loss="$eval_loss" -v eval_accuracy="$eval_accuracy" '
  BEGIN { n = split(labels, name, " "); for (i = 1; i <= n; ++i) id[name[i]] = i }
  {
    if (!($1 in id)) { print "row " NR ": unknown label " $1; bad = 1; next }
    s = $2; sub(".*\"probabilities\":\\[", "", s); sub("\\].*", "", s); split(s, p, ",")
    loss += -log(p[id[$1]])
    predicted = $2; sub(/.*"label":"/, "", predicted); sub(/".*/, "", predicted)
    correct += (predicted == $1); ++rows
  }
  END {
    loss /= rows; accuracy = correct / rows; d = loss - eval_loss; if (d < 0) d = -d
    printf "pairs: from pred.jsonl loss %.17g accuracy %.4f; eval_results.json loss %.17g accuracy %.4f\n",
           loss, accuracy, eval_loss, eval_accuracy
    exit bad || rows != 40 || d > 1e-12 * eval_loss || accuracy != eval_accuracy
  }' || fail "xlmr_predict's pair probabilities are not those the trainer evaluated"

probabilities() { sed -nE 's/.*"probabilities":\[([^]]*)\].*/\1/p' "$1"; }
same_swapped=$(paste -d'|' <(probabilities pred.jsonl) <(probabilities pred_swapped.jsonl) | awk -F'|' '$1 == $2' | wc -l)
same_single=$(paste -d'|' <(probabilities pred.jsonl) <(probabilities pred_single.jsonl) | awk -F'|' '$1 == $2' | wc -l)
echo "rows with unchanged probabilities: other second texts $same_swapped of 40, no second text $same_single of 40"
[ "$same_swapped" -eq 0 ] || fail "the second text does not change the probabilities of $same_swapped rows"
[ "$same_single" -eq 0 ] || fail "dropping the second text does not change the probabilities of $same_single rows"

for binary in finetune predict; do
  if [ "$binary" = finetune ]; then
    "$finetune" --train_file=pairs.tsv --text_pair_column=nope --output_dir=bad --cache_dir=cache > out.txt 2> err.txt
  else
    "$predict" --model_dir=model --input_file=eval.tsv --text_pair_column=nope --output_file=bad.jsonl > out.txt 2> err.txt
  fi
  status=$?
  [ "$status" -eq 2 ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -q -- "--text_pair_column" err.txt ||
    { cat err.txt; fail "$binary --text_pair_column=nope: status $status, expected 2 and one line naming the flag"; }
done
echo "text pair test passed"
