#!/usr/bin/env bash
# xlmr_finetune's memory flags end to end: --print_memory_plan prints the trade-off curve and
# exits 0 without training; a budget no plan fits stops the run before training (exit 2, one
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
