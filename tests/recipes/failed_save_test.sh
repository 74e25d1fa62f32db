#!/usr/bin/env bash
# A checkpoint save that fails (here: the file-size limit, `ulimit -f`, makes every write past
# it fail with EFBIG, as a full disk fails with ENOSPC; unlike a read-only directory it stops
# root too) stops the run with status 1 and one error line naming the checkpoint, the cause
# and the earlier checkpoint, which stays byte for byte as it was; no temporary directory is
# left; and the same command without the limit resumes from that checkpoint and finishes.
# The embedded model: a run of 8 steps (checkpoints 4 and 8), then the command with 16 steps.
# Last, a failed write to metrics.jsonl stops a run the same way.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
head -n 101 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
cmd=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir="$TEST_TMPDIR/cache" --output_dir=out
     --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --save_steps=4 --save_total_limit=1)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
hashes() { (cd "$1" && find . -type f | sort | xargs sha256sum); }

"$finetune" "${cmd[@]}" --max_steps=8 > first.log 2>&1 || { cat first.log; echo "the first run failed"; exit 1; }
[ -d out/checkpoint-8 ] && [ ! -d out/checkpoint-4 ] || { ls out; echo "expected checkpoint-8 alone"; exit 1; }
hashes out/checkpoint-8 > checkpoint8.before
# Below the model's size: the next checkpoint's model.safetensors cannot be written whole.
model_kib=$(( $(stat -c %s out/checkpoint-8/model.safetensors) / 1024 ))
limit_kib=$(( model_kib / 2 ))
# SIGXFSZ ignored (it is inherited through exec): the write returns EFBIG instead of a kill.
(trap '' XFSZ; ulimit -f "$limit_kib"; exec "$finetune" "${cmd[@]}" --max_steps=16) > limited.log 2>&1
status=$?
[ "$status" -eq 1 ] || { cat limited.log; fail "limited run: status $status, expected 1"; }
grep -q '^Checkpoint detected, resuming training at out/checkpoint-8' limited.log || { cat limited.log; fail "limited run did not resume"; }
errors=$(grep -c '^xlmr_finetune: ' limited.log)
line=$(grep '^xlmr_finetune: ' limited.log)
[ "$errors" -eq 1 ] || { cat limited.log; fail "limited run: $errors error lines, expected 1"; }
case "$line" in
  "xlmr_finetune: saving checkpoint-12 failed: "*"File too large"*"out/checkpoint-8 is intact, the run stopped") ;;
  *) fail "limited run: unexpected error line: $line" ;;
esac
echo "limited run: status $status, $line"
hashes out/checkpoint-8 | cmp -s - checkpoint8.before || fail "checkpoint-8 changed"
[ ! -e out/checkpoint-12 ] || fail "a checkpoint-12 exists after its save failed"
ls -d out/*.tmp-* > /dev/null 2>&1 && fail "temporary checkpoint left: $(ls -d out/*.tmp-*)"
[ ! -e out/model.safetensors.tmp ] || fail "out/model.safetensors.tmp left"
echo "checkpoint-8 byte for byte as before, no checkpoint-12, nothing temporary left"

"$finetune" "${cmd[@]}" --max_steps=16 > rerun.log 2>&1 || { cat rerun.log; fail "rerun without the limit failed"; }
grep -q '^Checkpoint detected, resuming training at out/checkpoint-8' rerun.log || fail "rerun did not resume from checkpoint-8"
for step in $(seq 1 16); do
  [ "$(grep -c "\"type\":\"train\",\"step\":$step," out/metrics.jsonl)" -eq 1 ] || fail "step $step not once in metrics.jsonl"
done
[ -f out/checkpoint-16/trainer_state.json ] && [ -f out/eval_results.json ] || fail "rerun did not finish"
echo "rerun: resumed from checkpoint-8, finished at 16, each step once in metrics.jsonl"
# A metrics.jsonl line that cannot be written stops the run the same way (status 1, one line
# naming the file, the record and the cause) instead of training on with lines lost: /dev/full
# takes the open and fails every write with ENOSPC, as a full disk does. The first line that
# fails is the run record (metrics.jsonl's first line; the train lines go through the same
# Trainer::Run::WriteMetrics).
"$finetune" "${cmd[@]}" --max_steps=2 --output_dir=full --metrics_file=/dev/full > full.log 2>&1
status=$?
line=$(grep '^xlmr_finetune: ' full.log)
[ "$status" -eq 1 ] && [ "$(grep -c '^xlmr_finetune: ' full.log)" -eq 1 ] &&
  [ "$line" = "xlmr_finetune: --metrics_file=/dev/full: writing the run record failed: No space left on device; the run stopped" ] ||
  { cat full.log; fail "metrics.jsonl on a full disk: status $status, expected 1 and one line naming it"; }
echo "metrics.jsonl on a full disk: status $status, $line"
[ "$failures" -eq 0 ] && echo "failed save handled"
exit "$failures"
