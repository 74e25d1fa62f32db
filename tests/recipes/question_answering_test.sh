#!/usr/bin/env bash
# --task=question_answering end to end, shortened: a few steps on 14 examples in the JSON-lines
# form of an HF dataset (two unanswerable: --version_2_with_negative) and the same data as SQuAD
# v1.1 JSON without them; the output directory's config.json, metrics.jsonl and
# eval_results.json under evaluate's names, and run_qa's prediction files (eval_ for the eval
# file, predict_ for the test file, before eval_results.json and in the manifest); xlmr_predict
# on the trained directories (the same files as the training run's final evaluation, byte for
# byte, also after --load_best_model_at_end; predict_results.json; an input without answers);
# bad inputs of both binaries (exit 2, one line naming the flag, or the file and id; nothing
# written); the embedded example (recipes/data/langid_qa) run for 3 steps with no data flags.
# Args: xlmr_finetune, xlmr_predict, the examples (tests/framework/data/testdata/qa_examples.jsonl).
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
examples=$(absolute "$3")
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }
common=(--task=question_answering --cache_dir=cache --max_seq_length=64 --doc_stride=16 --max_steps=4
        --per_device_train_batch_size=8 --learning_rate=1e-3 --logging_steps=2)
# xlmr_predict with the training run's windows (the same --max_seq_length and --doc_stride).
predict_flags=(--max_seq_length=64 --doc_stride=16)

# SQuAD v2 as JSON lines: windows of 64 tokens, the squad_v2 figures. The examples are the test
# file too: run_qa's predict_ files.
"$finetune" "${common[@]}" --train_file="$examples" --eval_file="$examples" --test_file="$examples" \
  --version_2_with_negative --output_dir=out_v2 > v2.txt 2>&1 || fail "v2 run: $(cat v2.txt)"
grep -q '"XLMRobertaForQuestionAnswering"' out_v2/config.json || fail "config.json names no QA class"
for name in eval_exact eval_f1 eval_total eval_HasAns_exact eval_HasAns_f1 eval_HasAns_total \
            eval_NoAns_exact eval_NoAns_f1 eval_NoAns_total eval_best_exact eval_best_f1; do
  grep -q "\"$name\"" out_v2/eval_results.json || fail "eval_results.json lacks $name: $(cat out_v2/eval_results.json)"
done
grep -q '"eval_total": 14' out_v2/eval_results.json || fail "not 14 questions scored: $(cat out_v2/eval_results.json)"
grep -q '"eval_NoAns_total": 2' out_v2/eval_results.json || fail "not 2 unanswerable: $(cat out_v2/eval_results.json)"
grep '"type":"eval"' out_v2/metrics.jsonl | grep -q '"eval_exact":' || fail "no eval line with eval_exact"

# run_qa's prediction files of the final evaluations: listed in manifest.json, written before
# eval_results.json (the mark of a finished run: only manifest.json, which seals the directory,
# may be newer), and no temporary file left.
expect_prediction_files() {  # directory, whether v2 (null_odds files)
  local dir="$1" v2="$2" prefix name
  for prefix in eval_ predict_; do
    for name in predictions.json nbest_predictions.json null_odds.json; do
      if [ "$name" = null_odds.json ] && [ "$v2" = no ]; then
        [ ! -e "$dir/$prefix$name" ] || fail "$dir/$prefix$name written without --version_2_with_negative"
        continue
      fi
      [ -s "$dir/$prefix$name" ] || fail "$dir/$prefix$name missing: $(ls "$dir")"
      grep -q "\"name\":\"$prefix$name\"" "$dir/manifest.json" || fail "manifest.json does not list $prefix$name"
    done
  done
  local newer
  newer=$(find "$dir" -maxdepth 1 -type f -newer "$dir/eval_results.json" ! -name manifest.json)
  [ -z "$newer" ] || fail "written after eval_results.json: $newer"
  ! ls "$dir" | grep -q '\.tmp$' || fail "temporary files left in $dir: $(ls "$dir")"
}
expect_prediction_files out_v2 yes
# The eval and test files are the same examples: the same answers under both prefixes.
for name in predictions.json nbest_predictions.json null_odds.json; do
  cmp -s "out_v2/eval_$name" "out_v2/predict_$name" || fail "eval_$name and predict_$name differ on the same file"
done
questions_in() { grep -o "\"q[0-9]*\": \[" "$1" | wc -l; }  # the ids that open an n-best list
[ "$(questions_in out_v2/eval_nbest_predictions.json)" -eq 14 ] || fail "eval_nbest_predictions.json: not 14 questions"

# SQuAD v1.1 JSON (the answerable examples, one paragraph each): exact_match and f1.
python_free_squad() {  # JSON lines {id, question, context, answers{text, answer_start}} -> SQuAD
  awk 'BEGIN { printf "{\"version\": \"1.1\", \"data\": [{\"title\": \"t\", \"paragraphs\": [" }
       /"text": \[\]/ { next }
       {
         line = $0
         match(line, /"context": "([^"\\]|\\.)*"/); context = substr(line, RSTART, RLENGTH)
         match(line, /"question": "([^"\\]|\\.)*"/); question = substr(line, RSTART, RLENGTH)
         match(line, /"id": "[^"]*"/); id = substr(line, RSTART, RLENGTH)
         match(line, /"text": \["([^"\\]|\\.)*"\]/); text = substr(line, RSTART + 9, RLENGTH - 10)
         match(line, /"answer_start": \[[0-9]+\]/); start = substr(line, RSTART + 17, RLENGTH - 18)
         printf "%s{%s, \"qas\": [{%s, %s, \"answers\": [{\"text\": %s, \"answer_start\": %s}]}]}",
                (n++ ? ", " : ""), context, id, question, text, start
       }
       END { print "]}]}" }' "$1"
}
python_free_squad "$examples" > squad.json
"$finetune" "${common[@]}" --train_file=squad.json --eval_file=squad.json --test_file=squad.json --output_dir=out_v1 \
  > v1.txt 2>&1 ||
  fail "v1 run: $(cat v1.txt)"
grep -q '"eval_exact_match"' out_v1/eval_results.json || fail "no eval_exact_match: $(cat out_v1/eval_results.json)"
grep -q '"eval_f1"' out_v1/eval_results.json || fail "no eval_f1: $(cat out_v1/eval_results.json)"
grep -q '"eval_HasAns' out_v1/eval_results.json && fail "squad_v2 figures without --version_2_with_negative"
expect_prediction_files out_v1 no

# xlmr_predict on the eval file with the trained directory answers as the training run's final
# evaluation did, byte for byte: the same model (model.safetensors holds the fp32 weights that
# evaluation used), the same windows (same flags, same tokenizer function), the same fp32
# forward in the same batches (--per_device_eval_batch_size 32 in both) and the same
# post-processing (train::EvaluateQa). Its predict_results.json holds the figures of
# eval_results.json under predict_ names, printed from the same doubles: equal as text.
same_figures() {  # eval_results.json, predict_results.json: every eval_ figure but the loss
  local eval="$1" predicted="$2" key value
  local keys
  keys=$(grep -o '"eval_[A-Za-z0-9_]*": [-0-9.e+]*' "$eval" | grep -v '"eval_loss"')
  [ -n "$keys" ] || fail "no eval_ figures in $eval"
  while read -r key value; do
    key=${key%:}; key=${key#\"eval_}; key=${key%\"}
    grep -qE "^ *\"predict_$key\": ${value//./\\.},?\$" "$predicted" || fail "predict_$key is not $value: $(cat "$predicted")"
  done <<< "$keys"
  [ "$(grep -c '"predict_' "$predicted")" -eq "$(echo "$keys" | wc -l)" ] || fail "other figures in $predicted"
}
expect_answers() {  # prediction directory, training directory, whether v2
  local dir="$1" trained="$2" v2="$3" name
  for name in predictions.json nbest_predictions.json null_odds.json; do
    if [ "$name" = null_odds.json ] && [ "$v2" = no ]; then
      [ ! -e "$dir/$name" ] || fail "$dir/$name written without --version_2_with_negative"
      continue
    fi
    cmp -s "$dir/$name" "$trained/eval_$name" || fail "$dir/$name differs from $trained/eval_$name"
  done
  ! ls "$dir" | grep -q '\.tmp$' || fail "temporary files left in $dir: $(ls "$dir")"
}
"$predict" --model_dir=out_v2 --input_file="$examples" --output_dir=answers_v2 --version_2_with_negative \
  "${predict_flags[@]}" > predict.txt 2>&1 || fail "xlmr_predict v2: $(cat predict.txt)"
expect_answers answers_v2 out_v2 yes
same_figures out_v2/eval_results.json answers_v2/predict_results.json
grep -q '"predict_examples": 14' answers_v2/predict_results.json || fail "predict_examples: $(cat answers_v2/predict_results.json)"
grep -q '^xlmr_predict: predict_exact ' predict.txt || fail "no figures line: $(cat predict.txt)"

"$predict" --model_dir=out_v1 --input_file=squad.json --output_dir=answers_v1 "${predict_flags[@]}" > predict.txt 2>&1 ||
  fail "xlmr_predict v1 on SQuAD JSON: $(cat predict.txt)"
expect_answers answers_v1 out_v1 no
same_figures out_v1/eval_results.json answers_v1/predict_results.json

# --load_best_model_at_end: the final model is the best checkpoint's (here step 2 of 6, by
# eval_f1), and the eval_ files are that model's evaluation, not the last step's: xlmr_predict
# with the final directory gives them byte for byte (the last step's answers differ: its eval_f1
# is lower).
"$finetune" "${common[@]}" --max_steps=6 --learning_rate=1e-2 --eval_steps=2 --save_steps=2 --load_best_model_at_end \
  --metric_for_best_model=f1 --train_file="$examples" --eval_file="$examples" --version_2_with_negative \
  --output_dir=out_best > best.txt 2>&1 || fail "best-model run: $(cat best.txt)"
grep -q '"model_step":2' out_best/metrics.jsonl ||
  fail "the best checkpoint is no longer step 2 of 6 (this check needs an earlier one): $(grep '"type":"eval"' out_best/metrics.jsonl)"
"$predict" --model_dir=out_best --input_file="$examples" --output_dir=answers_best --version_2_with_negative \
  "${predict_flags[@]}" > predict.txt 2>&1 || fail "xlmr_predict on the best model: $(cat predict.txt)"
expect_answers answers_best out_best yes
same_figures out_best/eval_results.json answers_best/predict_results.json

# The examples without "answers" (as data to predict comes): the same answers, nothing scored.
# Predicted into answers_v2 again: its predict_results.json, now stale, must go.
sed -E 's/, "answers": \{[^}]*\}//' "$examples" > questions.jsonl
! grep -q '"answers"' questions.jsonl || fail "questions.jsonl still has answers"
"$predict" --model_dir=out_v2 --input_file=questions.jsonl --output_dir=answers_v2 --version_2_with_negative \
  "${predict_flags[@]}" > predict.txt 2>&1 || fail "xlmr_predict without answers: $(cat predict.txt)"
expect_answers answers_v2 out_v2 yes
[ ! -e answers_v2/predict_results.json ] || fail "predict_results.json without gold answers: $(cat answers_v2/predict_results.json)"
[ "$(wc -l < predict.txt)" -eq 1 ] || fail "expected one line (no figures) without answers: $(cat predict.txt)"

# Bad inputs: one line, exit status 2, nothing trained.
expect_usage_error() {  # expected-substring, flags...
  local expected="$1"; shift
  rm -rf out_bad
  "$finetune" "${common[@]}" --output_dir=out_bad "$@" > stdout.txt 2> stderr.txt
  local status=$?
  if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || ! grep -qF -- "$expected" stderr.txt || [ -e out_bad ]; then
    fail "for $*: status $status, stderr: $(cat stderr.txt)"
  fi
}
printf '%s\n' '{"id": "x", "question": "q", "context": "abc", "answers": {"text": ["bc"], "answer_start": [0]}}' > off.jsonl
expect_usage_error "off.jsonl:1: id 'x': answer 0: answer_start 0 points at 'ab', not at its text 'bc'" --train_file=off.jsonl
printf '%s\n' '{"id": "y", "context": "abc", "answers": {"text": [], "answer_start": []}}' > missing.jsonl
expect_usage_error "missing.jsonl:1: id 'y': missing \"question\"" --train_file=missing.jsonl
printf '%s\n' '{"id": "z", "question": "q", "context": "   ", "answers": {"text": [], "answer_start": []}}' > blank.jsonl
expect_usage_error "blank.jsonl:1: id 'z': the context has no tokens" --train_file=blank.jsonl --version_2_with_negative
printf '%s\n' '{"id": "w", "question": "q", "context": "abc", "answers": {"text": [], "answer_start": []}}' > none.jsonl
expect_usage_error "none.jsonl:1: id 'w': no answer; unanswerable questions need --version_2_with_negative" --train_file=none.jsonl
long_question=$(printf 'word%.0s ' $(seq 1 80))
long_context=$(printf 'ctx%.0s ' $(seq 1 80))
printf '{"id": "v", "question": "%s", "context": "%s", "answers": {"text": [], "answer_start": []}}\n' \
  "$long_question" "$long_context" > long.jsonl
expect_usage_error "long.jsonl:1: id 'v': the question has" --train_file=long.jsonl --version_2_with_negative
expect_usage_error "--doc_stride" --train_file="$examples" --doc_stride=64
expect_usage_error "--label_smoothing_factor" --train_file="$examples" --label_smoothing_factor=0.1 --version_2_with_negative
expect_usage_error "--padding_free: expected false or unset with --task=question_answering" --train_file="$examples" \
  --padding_free=true --version_2_with_negative

# xlmr_predict's bad inputs with the question-answering model: one line, exit status 2, no
# output directory.
expect_predict_error() {  # expected-substring, flags...
  local expected="$1"; shift
  rm -rf answers_bad out.jsonl
  "$predict" --model_dir=out_v2 "$@" > stdout.txt 2> stderr.txt
  local status=$?
  if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || ! grep -qF -- "$expected" stderr.txt ||
     [ -e answers_bad ] || [ -e out.jsonl ]; then
    fail "xlmr_predict $*: status $status, stderr: $(cat stderr.txt)"
  fi
}
expect_predict_error "off.jsonl:1: id 'x': answer 0: answer_start 0 points at 'ab', not at its text 'bc'" \
  --input_file=off.jsonl --output_dir=answers_bad "${predict_flags[@]}"
expect_predict_error "missing.jsonl:1: id 'y': missing \"question\"" --input_file=missing.jsonl --output_dir=answers_bad \
  "${predict_flags[@]}"
expect_predict_error "--output_file: expected none with a question-answering model" --input_file="$examples" \
  --output_file=out.jsonl "${predict_flags[@]}"
expect_predict_error "--output_file: expected none with a question-answering model" --input_file="$examples" \
  --output_file=out.jsonl --output_dir=answers_bad "${predict_flags[@]}"
expect_predict_error "--output_dir: expected a directory for the prediction files" --input_file="$examples" \
  "${predict_flags[@]}"
expect_predict_error "--doc_stride: expected a number in [0, max_seq_length - 5 = 59), got 64" --input_file="$examples" \
  --output_dir=answers_bad --max_seq_length=64 --doc_stride=64
expect_predict_error "--doc_stride: expected a number in [0, max_seq_length - 5 = 59), got -1" --input_file="$examples" \
  --output_dir=answers_bad --max_seq_length=64 --doc_stride=-1
expect_predict_error "--n_best_size: expected a positive number, got 0" --input_file="$examples" \
  --output_dir=answers_bad "${predict_flags[@]}" --n_best_size=0
# Without --max_seq_length, and in a model directory that does not record it (prediction_args.json:
# the hub's, an older run's), question answering's default 384 (more than this model's 128 positions).
rm -rf out_unrecorded && cp -r out_v2 out_unrecorded && rm out_unrecorded/prediction_args.json
rm -rf answers_bad
"$predict" --model_dir=out_unrecorded --input_file="$examples" --output_dir=answers_bad --doc_stride=16 > stdout.txt 2> stderr.txt
[ $? -eq 2 ] && grep -qF "expected at most 128" stderr.txt && grep -qF "got 384" stderr.txt && [ ! -e answers_bad ] ||
  fail "the question-answering default of --max_seq_length is not 384: $(cat stderr.txt)"
printf 'not a directory\n' > answers_file
expect_predict_error "--output_dir: expected a directory (or a path where one can be made), got" --input_file="$examples" \
  --output_dir=answers_file "${predict_flags[@]}"

# The embedded example (no data flags: recipes/data/langid_qa with its training_args.json),
# shortened to 3 steps: its presets applied, the dev split scored as eval and the test split
# as test, both under squad_v2's names.
"$finetune" --task=question_answering --max_steps=3 --cache_dir=cache --output_dir=out_embedded > embedded.txt 2>&1 ||
  fail "embedded run: $(cat embedded.txt)"
grep -q '^embedded default run: .*max_seq_length=96.*version_2_with_negative=true.*(from recipes/data/langid_qa/training_args.json' \
  embedded.txt || fail "presets not applied: $(grep '^embedded' embedded.txt)"
for expected in '"eval_total": 1200' '"eval_NoAns_total": 400' '"test_total": 1200' '"test_NoAns_total": 400'; do
  grep -qF "$expected" out_embedded/eval_results.json ||
    fail "embedded run: no $expected in eval_results.json: $(cat out_embedded/eval_results.json)"
done
grep -q '"XLMRobertaForQuestionAnswering"' out_embedded/config.json || fail "embedded run: config.json names no QA class"
echo "PASSED"
