#!/usr/bin/env bash
# --task=question_answering end to end, shortened: a few steps on 14 examples in the JSON-lines
# form of an HF dataset (two unanswerable: --version_2_with_negative) and the same data as SQuAD
# v1.1 JSON without them; the output directory's config.json, metrics.jsonl and
# eval_results.json under evaluate's names; bad inputs (exit 2, one line naming file and id);
# the embedded example (recipes/data/langid_qa) run for 3 steps with no data flags.
# Args: xlmr_finetune, the examples (tests/framework/data/testdata/qa_examples.jsonl).
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
examples=$(absolute "$2")
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }
common=(--task=question_answering --cache_dir=cache --max_seq_length=64 --doc_stride=16 --max_steps=4
        --per_device_train_batch_size=8 --learning_rate=1e-3 --logging_steps=2)

# SQuAD v2 as JSON lines: windows of 64 tokens, the squad_v2 figures.
"$finetune" "${common[@]}" --train_file="$examples" --eval_file="$examples" --version_2_with_negative \
  --output_dir=out_v2 > v2.txt 2>&1 || fail "v2 run: $(cat v2.txt)"
grep -q '"XLMRobertaForQuestionAnswering"' out_v2/config.json || fail "config.json names no QA class"
for name in eval_exact eval_f1 eval_total eval_HasAns_exact eval_HasAns_f1 eval_HasAns_total \
            eval_NoAns_exact eval_NoAns_f1 eval_NoAns_total eval_best_exact eval_best_f1; do
  grep -q "\"$name\"" out_v2/eval_results.json || fail "eval_results.json lacks $name: $(cat out_v2/eval_results.json)"
done
grep -q '"eval_total": 14' out_v2/eval_results.json || fail "not 14 questions scored: $(cat out_v2/eval_results.json)"
grep -q '"eval_NoAns_total": 2' out_v2/eval_results.json || fail "not 2 unanswerable: $(cat out_v2/eval_results.json)"
grep '"type":"eval"' out_v2/metrics.jsonl | grep -q '"eval_exact":' || fail "no eval line with eval_exact"

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
"$finetune" "${common[@]}" --train_file=squad.json --eval_file=squad.json --output_dir=out_v1 > v1.txt 2>&1 ||
  fail "v1 run: $(cat v1.txt)"
grep -q '"eval_exact_match"' out_v1/eval_results.json || fail "no eval_exact_match: $(cat out_v1/eval_results.json)"
grep -q '"eval_f1"' out_v1/eval_results.json || fail "no eval_f1: $(cat out_v1/eval_results.json)"
grep -q '"eval_HasAns' out_v1/eval_results.json && fail "squad_v2 figures without --version_2_with_negative"

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

# The embedded example (no data flags: recipes/data/langid_qa with its training_args.json),
# shortened to 3 steps: its presets applied, the dev split scored as eval and the test split
# as test, both under squad_v2's names.
"$finetune" --task=question_answering --max_steps=3 --cache_dir=cache --output_dir=out_embedded > embedded.txt 2>&1 ||
  fail "embedded run: $(cat embedded.txt)"
grep -q '^embedded default run: .*max_seq_length=64.*version_2_with_negative=true.*(from recipes/data/langid_qa/training_args.json' \
  embedded.txt || fail "presets not applied: $(grep '^embedded' embedded.txt)"
for expected in '"eval_total": 1403' '"eval_NoAns_total": 400' '"test_total": 1401' '"test_NoAns_total": 400'; do
  grep -qF "$expected" out_embedded/eval_results.json ||
    fail "embedded run: no $expected in eval_results.json: $(cat out_embedded/eval_results.json)"
done
grep -q '"XLMRobertaForQuestionAnswering"' out_embedded/config.json || fail "embedded run: config.json names no QA class"
echo "PASSED"
