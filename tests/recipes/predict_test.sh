#!/usr/bin/env bash
# xlmr_predict end to end: fine-tunes the embedded default for 5 steps, predicts 20 rows of the
# embedded test split and checks the output lines of the contract; then every bad input must
# stop the run with exit status 2, one line naming the flag or file, and no output file.
# Args: xlmr_finetune, xlmr_predict, the embedded test split (test.tsv).
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
test_split=$(absolute "$3")
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }

head -n 21 "$test_split" > rows.tsv  # header + 20 rows
# Evaluated on the same 20 rows, in one batch as xlmr_predict below: eval_results.json then
# holds the trained model's loss and accuracy on exactly the rows predicted.
"$finetune" --max_steps=5 --output_dir=model --cache_dir=cache --eval_file=rows.tsv --test_file=rows.tsv \
  --per_device_eval_batch_size=64 > finetune.log 2>&1 || { cat finetune.log; fail "xlmr_finetune --max_steps=5"; }
# The same rows as .jsonl (JSON-escaping backslashes and quotes; .tsv fields hold no tabs or
# newlines), to check that the format does not change the predictions.
awk -F'\t' 'NR > 1 { gsub(/\\/, "\\\\", $1); gsub(/"/, "\\\"", $1);
                     printf "{\"text\": \"%s\", \"label\": \"%s\"}\n", $1, $2 }' rows.tsv > rows.jsonl

"$predict" --model_dir=model --input_file=rows.tsv --output_file=pred.jsonl --per_device_eval_batch_size=64 2> predict.log || {
  cat predict.log; fail "xlmr_predict on rows.tsv"; }
[ "$(wc -l < pred.jsonl)" -eq 20 ] || fail "expected 20 lines, got $(wc -l < pred.jsonl)"
[ ! -e pred.jsonl.tmp ] || fail "pred.jsonl.tmp left behind"

# The model's labels, from config.json's id2label ("0": "ar", ...), in id order.
labels=$(sed -n '/"id2label"/,/}/p' model/config.json | grep -o '"[0-9]*": "[^"]*"' |
         sort -t'"' -k2,2n | sed 's/.*: "\(.*\)"/\1/' | tr '\n' ' ')
num_labels=$(echo "$labels" | wc -w)
[ "$num_labels" -eq 20 ] || fail "expected 20 labels in model/config.json, found $num_labels"

# Per line: index i (in input order), label among the model's and equal to the argmax of the
# logits and of the probabilities, num_labels logits and probabilities, probabilities summing
# to 1. Tolerance 1e-12: the probabilities are a float64 softmax printed so that they read
# back exactly, so their sum is 1 up to ~20 roundings of 1.1e-16 each.
awk -v labels="$labels" -v n="$num_labels" '
  function values(key,    s) {  # the numbers of array `key` in the current line, into v[1..]
    s = $0; sub(".*\"" key "\":\\[", "", s); sub("\\].*", "", s); return split(s, v, ",")
  }
  function argmax(count,    i, best) { best = 1; for (i = 2; i <= count; ++i) if (v[i] > v[best]) best = i; return best }
  BEGIN { split(labels, name, " ") }
  {
    line = NR - 1
    if ($0 !~ "^\\{\"index\":" line ",\"label\":\"[^\"]+\",\"logits\":\\[[^]]+\\],\"probabilities\":\\[[^]]+\\]\\}$") {
      print "line " line ": unexpected fields: " $0; bad = 1; next
    }
    label = $0; sub(/.*"label":"/, "", label); sub(/".*/, "", label)
    if (values("logits") != n) { print "line " line ": expected " n " logits"; bad = 1 }
    if (name[argmax(n)] != label) { print "line " line ": label " label " is not the argmax of the logits"; bad = 1 }
    if (values("probabilities") != n) { print "line " line ": expected " n " probabilities"; bad = 1 }
    if (name[argmax(n)] != label) { print "line " line ": label " label " is not the argmax of the probabilities"; bad = 1 }
    total = 0; for (i = 1; i <= n; ++i) { if (v[i] < 0 || v[i] > 1) bad = 1; total += v[i] }
    if (total < 1 - 1e-12 || total > 1 + 1e-12) { printf "line %d: probabilities sum to %.17g\n", line, total; bad = 1 }
  }
  END { exit bad }' pred.jsonl || fail "malformed prediction lines"

# The logits are the trained model's: the mean -log(probability of the row's label) and the
# fraction of rows whose label is the argmax, recomputed here from the printed probabilities,
# equal the eval_loss and eval_accuracy the trainer computed with the model in memory at the
# end of training on the same rows in the same single batch. Tolerance 1e-12 relative: both
# sides take the log of the same doubles (the probabilities print with 17 digits and read back
# exactly); logits of any other model (a fresh head, a wrongly mapped tensor, other weights)
# move the loss by far more.
eval_field() { sed -nE "s/.*\"$1\": ([-0-9.e+]+).*/\1/p" model/eval_results.json; }
eval_loss=$(eval_field eval_loss)
eval_accuracy=$(eval_field eval_accuracy)
[ -n "$eval_loss" ] && [ -n "$eval_accuracy" ] || { cat model/eval_results.json; fail "eval_results.json lacks eval_loss or eval_accuracy"; }
awk -F'\t' 'NR > 1 { print $2 }' rows.tsv > row_labels.txt
paste -d'\t' row_labels.txt pred.jsonl | awk -F'\t' -v labels="$labels" -v n="$num_labels" \
    -v eval_loss="$eval_loss" -v eval_accuracy="$eval_accuracy" '
  BEGIN { split(labels, name, " "); for (i = 1; i <= n; ++i) id[name[i]] = i }
  {
    if (!($1 in id)) { print "row " NR ": label " $1 " is not one of the model'"'"'s"; bad = 1; next }
    s = $2; sub(".*\"probabilities\":\\[", "", s); sub("\\].*", "", s); split(s, p, ",")
    loss += -log(p[id[$1]])
    predicted = $2; sub(/.*"label":"/, "", predicted); sub(/".*/, "", predicted)
    correct += (predicted == $1)
    ++rows
  }
  END {
    loss /= rows; accuracy = correct / rows
    printf "from pred.jsonl: loss %.17g accuracy %.4f; eval_results.json: loss %.17g accuracy %.4f\n",
           loss, accuracy, eval_loss, eval_accuracy
    d = loss - eval_loss; if (d < 0) d = -d
    exit bad || rows != 20 || d > 1e-12 * eval_loss || accuracy != eval_accuracy
  }' || fail "the predicted probabilities are not the trained model's (eval_loss / eval_accuracy differ)"

"$predict" --model_dir=model --input_file=rows.jsonl --output_file=pred_from_jsonl.jsonl --per_device_eval_batch_size=64 2> predict.log || {
  cat predict.log; fail "xlmr_predict on rows.jsonl"; }
cmp -s pred.jsonl pred_from_jsonl.jsonl || fail "the .jsonl input gave other predictions than the .tsv input"

# The same flags from a --flagfile (a comment, a blank line, leading blanks): the same predictions.
printf -- '# the model and its input\n--model_dir=model\n\n  --input_file=rows.tsv\n--per_device_eval_batch_size=64\n' > good.flags
"$predict" --flagfile=good.flags --output_file=pred_from_flagfile.jsonl 2> predict.log || {
  cat predict.log; fail "xlmr_predict --flagfile=good.flags"; }
cmp -s pred.jsonl pred_from_flagfile.jsonl || fail "--flagfile gave other predictions than the same flags on the command line"

expect_usage_error() {  # expected-substring, flags...
  local expected="$1"; shift
  rm -f out.jsonl out.jsonl.tmp
  "$predict" --output_file=out.jsonl "$@" > stdout.txt 2> stderr.txt
  local status=$?
  if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || ! grep -qF -- "$expected" stderr.txt ||
     [ -e out.jsonl ] || [ -e out.jsonl.tmp ]; then
    echo "FAILED for $*: status $status, output $(ls out.jsonl* 2> /dev/null || echo absent), stderr:"
    cat stderr.txt
    failures=$((failures + 1))
  fi
}
failures=0
expect_usage_error "--model_dir=no_such_model" --model_dir=no_such_model --input_file=rows.tsv
expect_usage_error "--model_dir" --input_file=rows.tsv
expect_usage_error "missing.tsv" --model_dir=model --input_file=missing.tsv
expect_usage_error "--text_column" --model_dir=model --input_file=rows.tsv --text_column=sentence
expect_usage_error "--max_seq_length" --model_dir=model --input_file=rows.tsv --max_seq_length=100000
expect_usage_error "--per_device_eval_batch_size" --model_dir=model --input_file=rows.tsv --per_device_eval_batch_size=0
expect_usage_error "--device" --model_dir=model --input_file=rows.tsv --device=tpu
expect_usage_error "--gemm_algorithms: expected heuristic or measured" --model_dir=model --input_file=rows.tsv --gemm_algorithms=best
# Question answering writes a directory (--output_dir), the other tasks a file: each refuses the
# other's flag (question_answering_test predicts with a trained question-answering model).
mkdir -p qa_model
printf '{"architectures": ["XLMRobertaForQuestionAnswering"], "model_type": "xlm-roberta"}\n' > qa_model/config.json
expect_usage_error "--output_file: expected none with a question-answering model" --model_dir=qa_model --input_file=rows.tsv
expect_usage_error "--output_dir: expected none with a sequence_classification model" --model_dir=model \
  --input_file=rows.tsv --output_dir=answers
[ ! -e answers ] || { echo "FAILED: --output_dir answers created"; failures=$((failures + 1)); }
# Abseil's own parse errors (it would exit 1 with several lines): one line and status 2 too.
expect_usage_error "--no_such_flag: unknown flag" --model_dir=model --input_file=rows.tsv --no_such_flag=1
expect_usage_error "--per_device_eval_batch_size: invalid value 'many'" --model_dir=model --input_file=rows.tsv --per_device_eval_batch_size=many
# Inside a --flagfile (Abseil would read it itself and exit 1): the same, naming file and line.
printf -- '--model_dir=model\n--per_device_eval_batch_size=many\n' > bad.flags
expect_usage_error "bad.flags:2: --per_device_eval_batch_size: invalid value 'many'" --input_file=rows.tsv --flagfile=bad.flags
expect_usage_error "--flagfile=missing.flags: cannot open" --model_dir=model --input_file=rows.tsv --flagfile=missing.flags
[ "$failures" -eq 0 ] || exit 1
echo "predict test passed"
