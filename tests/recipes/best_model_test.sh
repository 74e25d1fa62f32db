#!/usr/bin/env bash
# --load_best_model_at_end with --metric_for_best_model=accuracy and --save_total_limit=1, and
# early stopping, on the embedded data. The learning rate warms up linearly over the whole run
# to a peak too high to train at, so accuracy rises, then collapses. Which evaluation is best
# depends on the machine's rounding (OpenBLAS picks its kernels by CPU: step 80 of 120 with its
# Haswell kernels, step 60 with its generic ones), so the expectations are computed from the
# run's own evaluations with Hugging Face's rules (best: the first evaluation with the highest
# accuracy; early stopping: EarlyStoppingCallback against the best before each evaluation), and
# the test checks that the curve did rise and collapse, so that every case below is exercised.
# Catches:
#   best        the final model is not the best checkpoint's weights byte for byte,
#               eval_results.json does not name its step, the best checkpoint was deleted by
#               --save_total_limit=1, greater_is_better taken the wrong way for accuracy (the
#               lowest evaluation would be loaded), trainer_state.json without best_metric /
#               best_model_checkpoint;
#   killed      the same run SIGKILLed once checkpoint-100 exists and run again: the resumed
#               run must keep tracking the best (from trainer_state.json) and end with the same
#               final model;
#   sigterm     the same run stopped by SIGTERM once checkpoint-60 exists: the stop checkpoint
#               carries the best so far and the rerun ends as the uninterrupted run;
#   early       --early_stopping_patience=2 at lr 2e-2 (accuracy collapses early): the run stops
#               after the evaluation HF's rule stops at, before step 120, saves that step's
#               checkpoint, says why in its summary, evaluates nothing later and ends with the
#               best checkpoint's weights (a patience counting improvements, or one never reset,
#               stops elsewhere); the same command again has nothing left to do and changes no
#               file;
#   threshold   --early_stopping_threshold=0.05 --early_stopping_patience=1 at lr 5e-3: the run
#               stops where the rule with the threshold says, which on these evaluations is not
#               where the rule without it stops (a threshold left out of the rule stops there);
#   strategies  40 steps (an epoch is 750): --eval_strategy=steps without --eval_steps
#               evaluates every --logging_steps (15, 30) and the last step; --save_strategy=no
#               keeps only the last step's checkpoint; --eval_strategy=no evaluates only the
#               last step.
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
common=(--cache_dir=cache --max_steps=120 --warmup_steps=120 --eval_steps=20 --save_steps=20
        --load_best_model_at_end --metric_for_best_model=accuracy --save_total_limit=1)
fail() { echo "FAILED: $*"; exit 1; }
json_field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

# Reads a run's evaluations (metrics.jsonl) and prints what HF's rules make of them:
#   best METRICS [UPTO]                     the first step with the highest accuracy (at or before UPTO)
#   stop METRICS PATIENCE THRESHOLD         "STEP BEST": the evaluation EarlyStoppingCallback stops
#                                           after and the best up to it, or "none BEST"
rule() {
  python3 - "$@" <<'PY'
import json, sys
mode, path = sys.argv[1], sys.argv[2]
evals = [(r["step"], r["eval_accuracy"]) for r in map(json.loads, open(path)) if r.get("type") == "eval"]
if mode == "best":
    upto = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    best = None
    for step, accuracy in evals:
        if step <= upto and (best is None or accuracy > best[1]):
            best = (step, accuracy)
    print(best[0])
else:
    patience, threshold = int(sys.argv[3]), float(sys.argv[4])
    best, counter = None, 0
    for step, accuracy in evals:
        improved = best is None or (accuracy > best[1] and abs(accuracy - best[1]) > threshold)
        counter = 0 if improved else counter + 1
        if best is None or accuracy > best[1]:
            best = (step, accuracy)
        if counter >= patience:
            print(step, best[0])
            sys.exit()
    print("none", best[0])
PY
}

# best
"$finetune" --output_dir=best --learning_rate=5e-3 "${common[@]}" 2> best.log || { cat best.log; fail "best run"; }
best=$(rule best best/metrics.jsonl)
# Rise and collapse: neither the first nor the last evaluation is the best.
[ "$best" -gt 20 ] && [ "$best" -lt 120 ] || { grep '"type":"eval"' best/metrics.jsonl; fail "no rise and collapse (best at step $best)"; }
echo "best evaluation: step $best"
[ "$(json_field best/eval_results.json step)" = "$best" ] || { cat best/eval_results.json; fail "eval_results.json: step"; }
[ -d "best/checkpoint-$best" ] || { ls best; fail "the best checkpoint was deleted"; }
cmp best/model.safetensors "best/checkpoint-$best/model.safetensors" || fail "final model is not checkpoint-$best's"
state=best/checkpoint-120/trainer_state.json
[ "$(json_field "$state" best_global_step)" = "$best" ] || { cat "$state"; fail "trainer_state: best_global_step"; }
[[ "$(json_field "$state" best_model_checkpoint)" == *"best/checkpoint-$best" ]] || fail "trainer_state: best_model_checkpoint"
best_accuracy=$(sed -nE "s/.*\"type\":\"eval\",\"step\":$best,.*\"eval_accuracy\":([^,]*),.*/\1/p" best/metrics.jsonl)
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['best_metric']==float(sys.argv[2]) and s['eval_accuracy']==float(sys.argv[2]), s" \
  best/eval_results.json "$best_accuracy" || fail "eval_results.json: best_metric / eval_accuracy"
grep -q "loading the best model from checkpoint-$best" best.log || fail "no line about loading checkpoint-$best"

# killed
"$finetune" --output_dir=killed --learning_rate=5e-3 "${common[@]}" 2> killed1.log &
pid=$!
while [ ! -d killed/checkpoint-100 ]; do
  kill -0 "$pid" 2> /dev/null || fail "the run ended before checkpoint-100 appeared"
  sleep 0.01
done
kill -KILL "$pid"; wait "$pid" || true
[ ! -e killed/eval_results.json ] || fail "killed too late: the run had finished"
[ -d "killed/checkpoint-$best" ] || fail "checkpoint-$best deleted before the kill"
"$finetune" --output_dir=killed --learning_rate=5e-3 "${common[@]}" 2> killed2.log || { cat killed2.log; fail "rerun"; }
grep -q "Checkpoint detected" killed2.log || { cat killed2.log; fail "the rerun did not resume"; }
cmp killed/model.safetensors best/model.safetensors || fail "resumed run's final model differs"
[ "$(json_field killed/eval_results.json step)" = "$best" ] || fail "resumed eval_results.json: step"

# sigterm
"$finetune" --output_dir=sigterm --learning_rate=5e-3 "${common[@]}" 2> sigterm1.log &
pid=$!
while [ ! -d sigterm/checkpoint-60 ]; do
  kill -0 "$pid" 2> /dev/null || fail "the run ended before checkpoint-60 appeared"
  sleep 0.01
done
kill -TERM "$pid"; status=0; wait "$pid" || status=$?
[ "$status" -ne 0 ] && [ ! -e sigterm/eval_results.json ] || { cat sigterm1.log; fail "SIGTERM: the run was not stopped"; }
stop_dir=$(ls -d sigterm/checkpoint-* | sort -t- -k2 -n | tail -n 1)
stop_state=$stop_dir/trainer_state.json
best_so_far=$(rule best best/metrics.jsonl "${stop_dir##*-}")
[ "$(json_field "$stop_state" best_global_step)" = "$best_so_far" ] ||
  { cat "$stop_state"; fail "SIGTERM checkpoint: best_global_step (expected $best_so_far)"; }
"$finetune" --output_dir=sigterm --learning_rate=5e-3 "${common[@]}" 2> sigterm2.log || { cat sigterm2.log; fail "rerun after SIGTERM"; }
cmp sigterm/model.safetensors best/model.safetensors || fail "SIGTERM and rerun: final model differs"
[ "$(json_field sigterm/eval_results.json step)" = "$best" ] || fail "SIGTERM and rerun: eval_results.json step"
[ -d "sigterm/checkpoint-$best" ] || { ls sigterm; fail "SIGTERM and rerun: the best checkpoint was deleted"; }

# early
"$finetune" --output_dir=early --learning_rate=2e-2 --early_stopping_patience=2 "${common[@]}" 2> early.log \
  || { cat early.log; fail "early stopping run"; }
read -r stop early_best < <(rule stop early/metrics.jsonl 2 0)
last_eval=$(grep '"type":"eval"' early/metrics.jsonl | tail -n 1 | sed -nE 's/.*"step":([0-9]+),.*/\1/p')
[ "$stop" != none ] && [ "$stop" -lt 120 ] || { grep '"type":"eval"' early/metrics.jsonl; fail "the rule never stops this run"; }
echo "early stopping: after step $stop, best step $early_best"
[ "$last_eval" = "$stop" ] || { grep '"type":"eval"' early/metrics.jsonl; fail "last evaluation at step $last_eval, not $stop"; }
grep '"type":"summary"' early/metrics.jsonl | grep -q "\"steps\":$stop,.*\"stopped\":\"early stopping: 2 evaluations" \
  || { tail -n 1 early/metrics.jsonl; fail "summary does not say the run stopped early at step $stop"; }
[ -d "early/checkpoint-$stop" ] && [ -d "early/checkpoint-$early_best" ] ||
  { ls early; fail "checkpoints $early_best and $stop"; }
cmp early/model.safetensors "early/checkpoint-$early_best/model.safetensors" || fail "final model is not checkpoint-$early_best's"
# A rerun of the early-stopped run has nothing left to do (it does not redo its end).
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
sums early > early.before
"$finetune" --output_dir=early --learning_rate=2e-2 --early_stopping_patience=2 "${common[@]}" 2> early2.log \
  || { cat early2.log; fail "rerun of the early-stopped run"; }
grep -q "holds the finished run (.*checkpoint-$stop, step $stop of 120, stopped early): nothing left to do" early2.log \
  || { cat early2.log; fail "rerun of the early-stopped run: no 'nothing left to do'"; }
sums early | cmp - early.before || fail "rerun of the early-stopped run changed files"
# threshold
"$finetune" --output_dir=threshold --learning_rate=5e-3 --early_stopping_patience=1 --early_stopping_threshold=0.05 \
  "${common[@]}" 2> threshold.log || { cat threshold.log; fail "threshold run"; }
# The same trajectory as the best run's until it stops: the rule with and without the threshold,
# applied to the best run's evaluations, must stop at different steps (so the case tells them
# apart), and the run where the threshold says.
read -r threshold_stop _ < <(rule stop best/metrics.jsonl 1 0.05)
read -r plain_stop _ < <(rule stop best/metrics.jsonl 1 0)
[ "$threshold_stop" != none ] && [ "$threshold_stop" != "$plain_stop" ] ||
  { grep '"type":"eval"' best/metrics.jsonl; fail "threshold: the threshold changes nothing on this run"; }
grep '"type":"summary"' threshold/metrics.jsonl | grep -q "\"steps\":$threshold_stop,.*\"stopped\":\"early stopping: 1 evaluation without" \
  || { grep '"type":"eval"' threshold/metrics.jsonl; tail -n 1 threshold/metrics.jsonl; fail "threshold: not stopped at step $threshold_stop"; }

# strategies
eval_steps_of() { grep '"type":"eval"' "$1" | sed -nE 's/.*"step":([0-9]+),.*/\1/p' | tr '\n' ' '; }
"$finetune" --output_dir=steps --cache_dir=cache --max_steps=40 --eval_strategy=steps --logging_steps=15 \
  --save_strategy=no 2> steps.log || { cat steps.log; fail "strategies run"; }
[ "$(eval_steps_of steps/metrics.jsonl)" = "15 30 40 " ] || fail "evaluations at $(eval_steps_of steps/metrics.jsonl)"
[ "$(ls -d steps/checkpoint-* | tr '\n' ' ')" = "steps/checkpoint-40 " ] || { ls steps; fail "save_strategy=no"; }
"$finetune" --output_dir=none --cache_dir=cache --max_steps=40 --eval_strategy=no --save_steps=20 2> none.log \
  || { cat none.log; fail "eval_strategy=no run"; }
[ "$(eval_steps_of none/metrics.jsonl)" = "40 " ] || fail "eval_strategy=no: evaluations at $(eval_steps_of none/metrics.jsonl)"
[ -d none/checkpoint-20 ] || fail "--save_steps=20 alone: no checkpoint-20"
echo PASSED
