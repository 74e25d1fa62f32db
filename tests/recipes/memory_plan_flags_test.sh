#!/usr/bin/env bash
# xlmr_finetune's memory flags end to end: --print_memory_plan prints the trade-off curve and
# exits 0 without training (for the real tokens of packed micro-batches under --padding_free,
# for [B, max_seq_length] without) (under fused attention, the default, without selective recompute;
# --attention=eager offers it and keeps more); a budget no plan fits stops the run before training (exit 2, one
# line naming the flag); a feasible budget trains with the chosen plan, and the peak the
# metrics report stays within the budget (the prediction is for full-length batches, so a
# real step can only stay below it).
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
printf 'text\tlabel\nhello world\tpos\nbad weather today\tneg\nsome more words here\tpos\nno\tneg\n' > train.tsv
common=(--train_file=train.tsv --cache_dir=cache --max_seq_length=32 --per_device_train_batch_size=4)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

"$finetune" "${common[@]}" --output_dir=out_print --print_memory_plan > print.txt 2> print_err.txt
status=$?
[ "$status" -eq 0 ] || fail "--print_memory_plan exited $status: $(cat print_err.txt)"
grep -q "Pareto front" print.txt || fail "--print_memory_plan printed no curve: $(cat print.txt)"
grep -qE '^  KK +[0-9]+ ' print.txt || fail "the curve does not start at keep-everything: $(cat print.txt)"
[ -e out_print ] && fail "--print_memory_plan wrote an output directory"
# --padding_free (the default) plans for tokens: the probe holds the most real tokens 4 training
# rows hold (here all of them: one micro-batch), not 4 x 32, and a step over exactly those rows
# peaks at the predicted keep-everything peak, byte for byte. --padding_free=false plans for
# [4, 32], above it.
keep_peak() { sed -nE 's/^  KK +([0-9]+) .*/\1/p' "$1"; }
"$finetune" "${common[@]}" --output_dir=out_one --max_steps=1 --logging_steps=1 > one.txt 2> one_err.txt ||
  fail "one packed step failed: $(cat one_err.txt)"
tokens=$(sed -nE 's/.*"type":"train".*"tokens":([0-9]+).*/\1/p' out_one/metrics.jsonl)
step_peak=$(sed -nE 's/.*"type":"train".*"peak_activation_bytes":([0-9]+).*/\1/p' out_one/metrics.jsonl)
grep -q "\[4 sequences, $tokens tokens packed\]" print.txt ||
  fail "the packed plan is not for the step's $tokens tokens: $(head -n 1 print.txt)"
[ -n "$step_peak" ] && [ "$step_peak" = "$(keep_peak print.txt)" ] ||
  fail "a step of $tokens tokens peaked at $step_peak bytes, the plan predicts $(keep_peak print.txt)"
"$finetune" "${common[@]}" --output_dir=out_padded --padding_free=false --print_memory_plan > padded.txt 2> padded_err.txt ||
  fail "--padding_free=false --print_memory_plan failed: $(cat padded_err.txt)"
grep -q "at batch \[4, 32\]" padded.txt || fail "the padded plan is not for [4, 32]: $(head -n 1 padded.txt)"
[ "$(keep_peak print.txt)" -lt "$(keep_peak padded.txt)" ] ||
  fail "the packed peak $(keep_peak print.txt) is not below the padded worst case $(keep_peak padded.txt)"

# The probe runs the task's own loss: per-token labels for token classification (the
# cross-entropy of sentence labels stopped it on logits [B, S, L]) and targets for regression.
printf 'hello\tB-x\nworld\tI-x\n\n' > tagged.conll
"$finetune" --train_file=tagged.conll --task=token_classification --cache_dir=cache --max_seq_length=32 \
  --output_dir=out_tagged --print_memory_plan > tagged.txt 2> tagged_err.txt ||
  fail "--task=token_classification --print_memory_plan failed: $(cat tagged_err.txt)"
grep -q "Pareto front" tagged.txt || fail "token classification printed no curve: $(cat tagged.txt)"
printf 'text\tlabel\nhello\t0.5\nworld\t1.5\n' > numbers.tsv
"$finetune" --train_file=numbers.tsv --task=regression --cache_dir=cache --max_seq_length=32 \
  --output_dir=out_regression --print_memory_plan > regression.txt 2> regression_err.txt ||
  fail "--task=regression --print_memory_plan failed: $(cat regression_err.txt)"

# --attention: fused (the default) keeps no s^2 probabilities, so the planner offers no S and
# keeping everything costs less than under eager attention, whose curve does offer S.
grep -q "fp32, fused attention" print.txt || fail "the default curve does not name fused attention: $(cat print.txt)"
grep -q "S not offered" print.txt || fail "no line saying S is not offered: $(cat print.txt)"
grep -qE '^[ *] [KR]*S[KSR]* +[0-9]' print.txt && fail "a fused-attention plan uses S: $(cat print.txt)"
"$finetune" "${common[@]}" --output_dir=out_eager --attention=eager --print_memory_plan > eager.txt 2> eager_err.txt ||
  fail "--attention=eager --print_memory_plan failed: $(cat eager_err.txt)"
grep -q "fp32, eager attention" eager.txt || fail "the eager curve does not name eager attention: $(cat eager.txt)"
grep -qE '^[ *] [KR]*S[KSR]* +[0-9]' eager.txt || fail "no eager-attention plan uses S: $(cat eager.txt)"
[ "$(keep_peak print.txt)" -lt "$(keep_peak eager.txt)" ] ||
  fail "fused keep-everything peak $(keep_peak print.txt) not below eager's $(keep_peak eager.txt)"
"$finetune" "${common[@]}" --output_dir=out_attention --attention=flash > attention.txt 2> attention_err.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < attention_err.txt)" -ne 1 ] || \
   ! grep -q -- "--attention: expected fused or eager" attention_err.txt || [ -e out_attention ]; then
  fail "bad --attention: status $status, stderr: $(cat attention_err.txt)"
fi

"$finetune" "${common[@]}" --output_dir=out_small --activation_memory_budget=1KiB > small.txt 2> small_err.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < small_err.txt)" -ne 1 ] || \
   ! grep -q -- "--activation_memory_budget=1KiB: no recompute plan fits" small_err.txt || \
   ! grep -q "give at least that" small_err.txt || [ -e out_small ]; then
  fail "infeasible budget: status $status, stderr: $(cat small_err.txt)"
fi

"$finetune" "${common[@]}" --output_dir=out_bad --activation_memory_budget=plenty > bad.txt 2> bad_err.txt
status=$?
if [ "$status" -ne 2 ] || ! grep -q -- "--activation_memory_budget: expected" bad_err.txt; then
  fail "malformed budget: status $status, stderr: $(cat bad_err.txt)"
fi

"$finetune" "${common[@]}" --output_dir=out_fit --activation_memory_budget=0.7 --max_steps=2 \
  --gradient_checkpointing > fit.txt 2> fit_err.txt
status=$?
[ "$status" -eq 0 ] || fail "feasible budget exited $status: $(tail -n 5 fit_err.txt)"
grep -q "gradient_checkpointing is ignored" fit_err.txt || fail "no note that the budget wins: $(cat fit_err.txt)"
plan_line=$(grep "recompute plan" fit_err.txt)
budget=$(echo "$plan_line" | sed -nE 's/.*within the budget of [^(]*\(([0-9]+) bytes\).*/\1/p')
[ -n "$budget" ] || fail "no plan line with a budget: $(cat fit_err.txt)"
peaks=$(grep '"type":"train"' out_fit/metrics.jsonl | sed -nE 's/.*"peak_activation_bytes":([0-9]+).*/\1/p')
[ -n "$peaks" ] || fail "no peak_activation_bytes in metrics.jsonl"
for peak in $peaks; do
  [ "$peak" -le "$budget" ] || fail "step peak $peak bytes above the budget $budget"
done

[ "$failures" -eq 0 ] && echo "memory plan flags test passed"
exit "$failures"
