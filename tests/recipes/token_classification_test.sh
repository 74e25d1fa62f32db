#!/usr/bin/env bash
# --task=token_classification and --task=regression end to end, shortened: a few steps on small
# slices of the embedded langid_ner data (CoNLL, and the same sentences as JSONL), the output
# directory's config.json and metrics, xlmr_predict's per-word lines; a regression run on a
# small .tsv with numeric labels. (Bad inputs of both tasks: finetune_bad_input_test.sh.)
# Args: xlmr_finetune, xlmr_predict, the embedded langid_ner train.conll, langid's train.tsv.
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
ner_train=$(absolute "$3")
langid_train=$(absolute "$4")
cd "$TEST_TMPDIR"
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/metrics_lines.sh"
fail() { echo "FAILED: $*"; exit 1; }

# Sentences [first, last] (1-based) of a CoNLL file: blank-line separated records.
sentences() { awk -v RS= -v ORS='\n\n' -v a="$2" -v b="$3" 'NR >= a && NR <= b' "$1"; }
sentences "$ner_train" 1 48 > train.conll
# Evaluation data may hold no tag that training lacks (an error): a slice of the training data.
sentences "$ner_train" 1 16 > dev.conll
sentences "$ner_train" 49 64 > unseen.conll
# The same sentences as JSON lines (tokens / ner_tags), words JSON-escaped.
to_jsonl() {
  awk -v RS= -F'\n' '{
    words = ""; tags = ""
    for (i = 1; i <= NF; ++i) {
      split($i, f, "\t"); w = f[1]; gsub(/\\/, "\\\\", w); gsub(/"/, "\\\"", w)
      words = words (i > 1 ? ", " : "") "\"" w "\""; tags = tags (i > 1 ? ", " : "") "\"" f[2] "\""
    }
    printf "{\"tokens\": [%s], \"ner_tags\": [%s], \"id\": %d}\n", words, tags, NR - 1
  }' "$1"
}
to_jsonl train.conll > train.jsonl
to_jsonl dev.conll > dev.jsonl
[ "$(wc -l < train.jsonl)" -eq 48 ] || fail "expected 48 JSON lines, got $(wc -l < train.jsonl)"

run() {  # output dir, flags...
  local out="$1"; shift
  "$finetune" --task=token_classification --max_steps=6 --logging_steps=2 --per_device_train_batch_size=8 \
    --per_device_eval_batch_size=16 --output_dir="$out" --cache_dir=cache "$@" > "$out.log" 2>&1 || {
    cat "$out.log"; fail "xlmr_finetune $*"; }
}
run conll --train_file=train.conll --eval_file=dev.conll --test_file=dev.conll
run jsonl --train_file=train.jsonl --eval_file=dev.jsonl --test_file=dev.jsonl

compact() { tr -d ' \n' < "$1"; }  # config.json is indented over several lines
[[ "$(compact conll/config.json)" == *'"architectures":["XLMRobertaForTokenClassification"]'* ]] || {
  cat conll/config.json; fail "config.json: architectures is not [\"XLMRobertaForTokenClassification\"]"; }
grep -q '"B-' conll/config.json || fail "config.json: no B- tag in id2label"
summary=$(tail -n 1 conll/metrics.jsonl)
[[ "$summary" == '{"type":"summary","steps":6,'* ]] || fail "bad summary line: $summary"
for key in eval_f1 eval_precision eval_recall eval_accuracy eval_loss test_f1; do
  [[ "$summary" == *"\"$key\":"* ]] || fail "summary lacks $key: $summary"
  grep -q "\"$key\"" conll/eval_results.json || fail "eval_results.json lacks $key"
done
# The same sentences in either format are the same examples: the same training, line for line.
diff <(without_run_history conll/metrics.jsonl) <(without_run_history jsonl/metrics.jsonl) > format.diff || {
  cat format.diff; fail "CoNLL and JSONL of the same sentences trained differently"; }

# xlmr_predict on words without tags: one line per sentence, one label per word.
cut -f1 unseen.conll > words.conll
"$predict" --model_dir=conll --input_file=words.conll --output_file=pred.jsonl 2> predict.log || {
  cat predict.log; fail "xlmr_predict on words.conll"; }
[ "$(wc -l < pred.jsonl)" -eq 16 ] || fail "expected 16 prediction lines, got $(wc -l < pred.jsonl)"
# Expected "words" of each line, written as the JSON array nlohmann dumps (no spaces).
awk -v RS= -F'\n' '{
    words = ""
    for (i = 1; i <= NF; ++i) { w = $i; gsub(/\\/, "\\\\", w); gsub(/"/, "\\\"", w); words = words (i > 1 ? "," : "") "\"" w "\"" }
    print NR - 1 "\t" NF "\t[" words "]"
  }' words.conll > expected.tsv
labels=$(sed -n '/"id2label"/,/}/p' conll/config.json | grep -o '": "[^"]*"' | sed 's/": "//; s/"$//' | tr '\n' ' ')
awk -F'\t' -v labels="$labels" '
  BEGIN { n = split(labels, l, " "); for (i = 1; i <= n; ++i) known["\"" l[i] "\""] = 1 }
  NR == FNR { count[$1] = $2; words[$1] = $3; next }
  {
    line = FNR - 1
    prefix = "{\"index\":" line ",\"words\":" words[line] ",\"labels\":["
    if (index($0, prefix) != 1 || substr($0, length($0) - 1) != "]}") {
      print "line " line ": expected " prefix "...]}, got " $0; bad = 1; next
    }
    body = substr($0, length(prefix) + 1); body = substr(body, 1, length(body) - 2)
    m = split(body, got, ",")
    if (m != count[line]) { print "line " line ": " m " labels for " count[line] " words"; bad = 1 }
    for (i = 1; i <= m; ++i) if (!(got[i] in known)) { print "line " line ": unknown label " got[i]; bad = 1 }
  }
  END { exit bad }' expected.tsv pred.jsonl || fail "malformed token-classification prediction lines"

# Regression: the label is a number (here the message's length in characters / 10).
numeric() {  # first, last data row of langid's train.tsv, with the numeric label
  awk -F'\t' -v a="$1" -v b="$2" 'NR == 1 { print "text\tlabel" } NR > a && NR <= b + 1 { printf "%s\t%.1f\n", $1, length($1) / 10 }' \
    "$langid_train"
}
numeric 1 96 > reg_train.tsv
numeric 97 128 > reg_dev.tsv
"$finetune" --task=regression --train_file=reg_train.tsv --eval_file=reg_dev.tsv --test_file=reg_dev.tsv \
  --max_steps=6 --logging_steps=2 --per_device_train_batch_size=8 --output_dir=regression --cache_dir=cache \
  > regression.log 2>&1 || { cat regression.log; fail "xlmr_finetune --task=regression"; }
[[ "$(compact regression/config.json)" == *'"problem_type":"regression"'* ]] || {
  cat regression/config.json; fail "config.json: problem_type is not \"regression\""; }
summary=$(tail -n 1 regression/metrics.jsonl)
for key in eval_mse eval_pearson eval_loss test_mse; do
  [[ "$summary" == *"\"$key\":"* ]] || fail "regression summary lacks $key: $summary"
done
"$predict" --model_dir=regression --input_file=reg_dev.tsv --output_file=reg_pred.jsonl 2> reg_predict.log || {
  cat reg_predict.log; fail "xlmr_predict on the regression model"; }
[ "$(wc -l < reg_pred.jsonl)" -eq 32 ] || fail "expected 32 regression lines, got $(wc -l < reg_pred.jsonl)"
grep -vqE '^\{"index":[0-9]+,"prediction":-?[0-9.e+-]+\}$' reg_pred.jsonl && {
  grep -vE '^\{"index":[0-9]+,"prediction":-?[0-9.e+-]+\}$' reg_pred.jsonl | head -3; fail "malformed regression lines"; }
# The fp32 prediction with the fewest digits that read back: never more than 9 significant
# digits (a float32's max_digits10; 17 would be the exact double of the float).
awk -F'"prediction":' '{ d = $2; sub(/}$/, "", d); sub(/[eE].*/, "", d); gsub(/[-.]/, "", d); sub(/^0+/, "", d)
                         if (length(d) > 9) { print "line " NR - 1 ": " $2; bad = 1 } } END { exit bad }' reg_pred.jsonl ||
  fail "regression predictions with more than 9 significant digits"
echo "token classification and regression tests passed"
