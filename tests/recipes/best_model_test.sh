#!/usr/bin/env bash
# --load_best_model_at_end with --metric_for_best_model=accuracy and --save_total_limit=1, and
# early stopping, on the embedded data. The learning rate warms up linearly over the whole run
# to a peak too high to train at, so accuracy rises, then collapses: evaluations every 20 steps
# give (at lr 5e-3) a best at step 80 of 120, and (at lr 2e-2) a best at step 40 and none better
# after it. Catches:
#   best        the final model is not checkpoint-80's weights byte for byte, eval_results.json
#               does not name step 80, the best checkpoint was deleted by --save_total_limit=1,
#               greater_is_better taken the wrong way for accuracy (step 20 would be loaded),
#               trainer_state.json without best_metric / best_model_checkpoint;
#   killed      the same run SIGKILLed once checkpoint-100 exists and run again: the resumed
#               run must keep tracking step 80 as the best (from trainer_state.json) and end
#               with the same final model;
#   sigterm     the same run stopped by SIGTERM once checkpoint-60 exists: the stop checkpoint
#               carries the best so far (step 60) and the rerun ends as the uninterrupted run;
#   early       --early_stopping_patience=2: evaluations at 60 and 80 do not improve on step
#               40, so the run stops after step 80's evaluation, saves checkpoint-80, says why
#               in its summary, evaluates nothing later and ends with checkpoint-40's weights
#               (a patience counting improvements instead would stop at step 40); the same
#               command again has nothing left to do and changes no file;
#   threshold   --early_stopping_threshold=0.05 --early_stopping_patience=1 at lr 5e-3: step 40's
#               accuracy beats step 20's by less than 0.05, so the run stops at step 40 (a
#               threshold left out of the rule would run on to step 100);
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

# best
"$finetune" --output_dir=best --learning_rate=5e-3 "${common[@]}" 2> best.log || { cat best.log; fail "best run"; }
grep -q '"type":"eval","step":80,' best/metrics.jsonl || fail "no evaluation at step 80"
[ "$(json_field best/eval_results.json step)" = 80 ] || { cat best/eval_results.json; fail "eval_results.json: step"; }
[ -d best/checkpoint-80 ] || { ls best; fail "the best checkpoint was deleted"; }
cmp best/model.safetensors best/checkpoint-80/model.safetensors || fail "final model is not checkpoint-80's"
state=best/checkpoint-120/trainer_state.json
[ "$(json_field "$state" best_global_step)" = 80 ] || { cat "$state"; fail "trainer_state: best_global_step"; }
[[ "$(json_field "$state" best_model_checkpoint)" == *best/checkpoint-80 ]] || fail "trainer_state: best_model_checkpoint"
best_accuracy=$(sed -nE 's/.*"type":"eval","step":80,.*"eval_accuracy":([^,]*),.*/\1/p' best/metrics.jsonl)
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['best_metric']==float(sys.argv[2]) and s['eval_accuracy']==float(sys.argv[2]), s" \
  best/eval_results.json "$best_accuracy" || fail "eval_results.json: best_metric / eval_accuracy"
grep -q "loading the best model from checkpoint-80" best.log || fail "no line about loading checkpoint-80"

# killed
"$finetune" --output_dir=killed --learning_rate=5e-3 "${common[@]}" 2> killed1.log &
pid=$!
while [ ! -d killed/checkpoint-100 ]; do
  kill -0 "$pid" 2> /dev/null || fail "the run ended before checkpoint-100 appeared"
  sleep 0.01
done
kill -KILL "$pid"; wait "$pid" || true
[ ! -e killed/eval_results.json ] || fail "killed too late: the run had finished"
[ -d killed/checkpoint-80 ] || fail "checkpoint-80 deleted before the kill"
"$finetune" --output_dir=killed --learning_rate=5e-3 "${common[@]}" 2> killed2.log || { cat killed2.log; fail "rerun"; }
grep -q "Checkpoint detected" killed2.log || { cat killed2.log; fail "the rerun did not resume"; }
cmp killed/model.safetensors best/model.safetensors || fail "resumed run's final model differs"
[ "$(json_field killed/eval_results.json step)" = 80 ] || fail "resumed eval_results.json: step"

# sigterm
"$finetune" --output_dir=sigterm --learning_rate=5e-3 "${common[@]}" 2> sigterm1.log &
pid=$!
while [ ! -d sigterm/checkpoint-60 ]; do
  kill -0 "$pid" 2> /dev/null || fail "the run ended before checkpoint-60 appeared"
  sleep 0.01
done
kill -TERM "$pid"; status=0; wait "$pid" || status=$?
[ "$status" -ne 0 ] && [ ! -e sigterm/eval_results.json ] || { cat sigterm1.log; fail "SIGTERM: the run was not stopped"; }
stop_state=$(ls -d sigterm/checkpoint-* | sort -t- -k2 -n | tail -n 1)/trainer_state.json
[ "$(json_field "$stop_state" best_global_step)" = 60 ] || { cat "$stop_state"; fail "SIGTERM checkpoint: best_global_step"; }
"$finetune" --output_dir=sigterm --learning_rate=5e-3 "${common[@]}" 2> sigterm2.log || { cat sigterm2.log; fail "rerun after SIGTERM"; }
cmp sigterm/model.safetensors best/model.safetensors || fail "SIGTERM and rerun: final model differs"
[ "$(json_field sigterm/eval_results.json step)" = 80 ] || fail "SIGTERM and rerun: eval_results.json step"
[ -d sigterm/checkpoint-80 ] || { ls sigterm; fail "SIGTERM and rerun: the best checkpoint was deleted"; }

# early
"$finetune" --output_dir=early --learning_rate=2e-2 --early_stopping_patience=2 "${common[@]}" 2> early.log \
  || { cat early.log; fail "early stopping run"; }
last_eval=$(grep '"type":"eval"' early/metrics.jsonl | tail -n 1 | sed -nE 's/.*"step":([0-9]+),.*/\1/p')
[ "$last_eval" = 80 ] || { grep '"type":"eval"' early/metrics.jsonl; fail "last evaluation at step $last_eval, not 80"; }
grep '"type":"summary"' early/metrics.jsonl | grep -q '"steps":80,.*"stopped":"early stopping: 2 evaluations' \
  || { tail -n 1 early/metrics.jsonl; fail "summary does not say the run stopped early at step 80"; }
[ -d early/checkpoint-80 ] && [ -d early/checkpoint-40 ] || { ls early; fail "checkpoints 40 and 80"; }
cmp early/model.safetensors early/checkpoint-40/model.safetensors || fail "final model is not checkpoint-40's"
# A rerun of the early-stopped run has nothing left to do (it does not redo its end).
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
sums early > early.before
"$finetune" --output_dir=early --learning_rate=2e-2 --early_stopping_patience=2 "${common[@]}" 2> early2.log \
  || { cat early2.log; fail "rerun of the early-stopped run"; }
grep -q "holds the finished run (.*checkpoint-80, step 80 of 120, stopped early): nothing left to do" early2.log \
  || { cat early2.log; fail "rerun of the early-stopped run: no 'nothing left to do'"; }
sums early | cmp - early.before || fail "rerun of the early-stopped run changed files"
# threshold
"$finetune" --output_dir=threshold --learning_rate=5e-3 --early_stopping_patience=1 --early_stopping_threshold=0.05 \
  "${common[@]}" 2> threshold.log || { cat threshold.log; fail "threshold run"; }
grep '"type":"summary"' threshold/metrics.jsonl | grep -q '"steps":40,.*"stopped":"early stopping: 1 evaluation without' \
  || { grep '"type":"eval"' threshold/metrics.jsonl; tail -n 1 threshold/metrics.jsonl; fail "threshold: not stopped at step 40"; }

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
