#!/usr/bin/env bash
# The kit's features part (tools/gpu_features.sh, tools/gpu_features_summary.py) on a machine
# without a GPU: its "device" side runs on the CPU too (--device=cpu), so every comparison must
# be exact, and planted differences must fail:
# 1. every run (2 steps, 20 evaluation rows): exit 0, "all comparisons within their bounds", a
#    row per run, the memory runs' plans SK and RK, the fp16 run's skipped steps;
# 2. planted on the device side: another --seed (token classification: the first loss moves),
#    another --learning_rate (regression: the second loss), another --loss_scale_init (fp16:
#    the loss scales differ), a --max_seq_length BERT refuses (the run fails): exit 1, each named;
# 3. a device metrics.jsonl tampered after the fact (a peak one byte above the prediction, a
#    step left out), the summary alone: exit 1, each named.
set -uo pipefail

runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}/${TEST_WORKSPACE:-xlmr_trainer}
tmp=${TEST_TMPDIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
features=$runfiles/tools/gpu_features.sh
summary=$runfiles/tools/gpu_features_summary.py
common=(--finetune="$runfiles/recipes/xlmr_finetune" --device=cpu --steps=2 --eval_rows=20 --oracle_jobs=2
  --oracle_threads=1)

# 1. Everything, cpu against cpu.
start=$SECONDS
"$features" "${common[@]}" --out="$tmp/pass" >"$tmp/pass.log" 2>&1 || { cat "$tmp/pass.log"; fail "cpu vs cpu did not pass"; }
echo "cpu vs cpu: passed in $((SECONDS - start)) s"
report=$tmp/pass/features.md
grep -q '^all comparisons within their bounds$' "$report" || fail "no verdict line in features.md"
for run in token_classification question_answering sentence_embedding regression bert roberta camembert bf16 \
  fp16_overflow recompute_selective recompute_packed; do
  grep -q "^| $run | loss, steps 1-2, max relative | 0 |" "$report" || fail "no exact loss row for $run"
done
grep -q '^| recompute_selective | recompute plan, device / oracle | SK / SK |' "$report" || fail "selective plan is not SK"
grep -q '^| recompute_packed | recompute plan, device / oracle | RK / RK |' "$report" || fail "packed plan is not RK"
grep -q '^| fp16_overflow | skipped steps (oracle) / steps whose skip differs | 2 / 0 |' "$report" ||
  fail "the fp16 run did not skip both steps"
grep -q 'FAILED' "$report" && fail "a FAILED row in a passing report"

# 2. Planted differences on the device side.
"$features" "${common[@]}" --out="$tmp/planted" --only=token_classification,regression,fp16_overflow,bert \
  --plant=token_classification:--seed=43 --plant=regression:--learning_rate=0.01 \
  --plant=fp16_overflow:--loss_scale_init=8388608 --plant=bert:--max_seq_length=1000 >"$tmp/planted.log" 2>&1
status=$?
cat "$tmp/planted/features.md"
[ "$status" -eq 1 ] || fail "planted differences: exit $status, expected 1"
report=$tmp/planted/features.md
for row in '| token_classification | loss, steps 1-2' '| regression | loss, steps 1-2' \
  '| fp16_overflow | steps whose loss_scale differs' '| bert | device run exit status'; do
  grep -F "$row" "$report" | grep -q 'FAILED' || fail "not caught: $row"
done
grep -q '^| bert | device.log: .*max_seq_length' "$report" || fail "the failed run's last log line is not shown"
grep -q '^failed: .*token_classification: loss' "$report" || fail "the verdict line does not name the failures"

# 3. Tampered device metrics, the summary alone.
cp -r "$tmp/pass/features" "$tmp/tampered"
python3 - "$tmp/tampered/recompute_selective/device/metrics.jsonl" "$tmp/tampered/roberta/device/metrics.jsonl" <<'PYTHON'
import json, sys
memory, dropped = sys.argv[1:3]
lines = [json.loads(line) for line in open(memory)]
for record in lines:
    if record.get("type") == "train" and record["step"] == 2:
        record["peak_activation_bytes"] += 1
open(memory, "w").writelines(json.dumps(r) + "\n" for r in lines)
lines = [json.loads(line) for line in open(dropped)]
open(dropped, "w").writelines(json.dumps(r) + "\n" for r in lines if not (r.get("type") == "train" and r["step"] == 2))
PYTHON
python3 "$summary" "$tmp/tampered" --device=cpu --steps=2 >"$tmp/tampered.md"
status=$?
cat "$tmp/tampered.md"
[ "$status" -eq 1 ] || fail "tampered metrics: exit $status, expected 1"
grep -F '| recompute_selective | device (predicted' "$tmp/tampered.md" | grep -q FAILED ||
  fail "a device peak above the prediction passed"
grep -F '| roberta | train records, device / oracle | 1 / 2 |' "$tmp/tampered.md" | grep -q FAILED ||
  fail "a missing train record passed"
echo "PASS"
