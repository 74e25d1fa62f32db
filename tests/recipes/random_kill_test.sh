#!/usr/bin/env bash
# SIGKILL at random moments, then the same command again, until the run finishes: the final
# weights and the last checkpoint are byte-identical to an uninterrupted run's and metrics.jsonl
# is that run's line for line (each step once, no torn line), whatever the kills hit: a step,
# a checkpoint write, the metrics file, the start-up or a resume's own clean-up.
# output_dir_rerun_test kills at chosen moments; here the moments are drawn, so over many CI
# runs the kills land where no one thought to put them.
#
# The draws come from bash's $RANDOM seeded with XLMR_KILL_SEED (default fixed, printed with
# every kill time, so a failure is replayed with the same seed; a timing-dependent landing
# may still differ).
# Every step writes a checkpoint (--save_steps=1), so writes take much of the time: the test
# requires XLMR_KILLS kills (default 6) and at least one inside a checkpoint write (a
# checkpoint-N.tmp-PID left) in the series that finishes, at most XLMR_KILL_MAX kills in all
# (default 40).
# A kill before the first checkpoint leaves only metrics.jsonl (and perhaps a temporary
# checkpoint): the rerun starts that run again from scratch (output_dir_rerun_test case 6).
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
seed=${XLMR_KILL_SEED:-16016}
min_kills=${XLMR_KILLS:-6}
max_kills=${XLMR_KILL_MAX:-40}
RANDOM=$seed
head -n 101 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
steps=40
cmd=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir="$TEST_TMPDIR/cache" --max_steps=$steps --per_device_train_batch_size=4
     --gradient_accumulation_steps=2 --save_steps=1 --save_total_limit=2 --logging_steps=1)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
draw_ms() { echo $(( (RANDOM * 32768 + RANDOM) % ($1 + 1) )); }  # uniform 0..$1
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/metrics_lines.sh"

# LOG PID: waits until the attempt writing LOG trains (its first progress line "step N/M",
# after the start-up and a resume's clean-up) or has ended.
wait_for_training() {
  while ! grep -qs '^step [0-9]*/' "$1" && kill -0 "$2" 2> /dev/null; do sleep 0.01; done
}

begin=$(now_ms)
"$finetune" "${cmd[@]}" --output_dir=whole > whole.log 2>&1 &
pid=$!
wait_for_training whole.log "$pid"
startup=$(( $(now_ms) - begin ))
wait "$pid" || { cat whole.log; echo "uninterrupted run failed"; exit 1; }
span=$(( $(now_ms) - begin ))
echo "seed $seed (XLMR_KILL_SEED=$seed replays the draws); uninterrupted run: ${span} ms, ${startup} ms of it before the first step"

# The moment of each kill: one attempt in four (drawn) is killed during its start-up, a uniform
# 0..S ms after it starts (S the latest attempt's start-up), which tests a resume's own
# clean-up; the others once they train, a uniform 0..(T - S)/XLMR_KILLS ms after their first
# step (T the uninterrupted run's duration), so a series takes about 2 x XLMR_KILLS kills
# before an attempt runs to the end. Measured, not fixed, so that a slow build (ASan) or a
# busy machine scales the draws with it. A series that finishes with too few kills, or none
# inside a write, starts over in a fresh directory.
window=$(( (span - startup) / min_kills ))
echo "kill delays: 0..${startup} ms after the start or 0..${window} ms after the first step; at least $min_kills kills in a series, one inside a write"
kills=0 mid_write=0 total_kills=0 finished=0 attempt=0
while [ "$total_kills" -lt "$max_kills" ]; do
  attempt=$((attempt + 1))
  launched=$(now_ms)
  "$finetune" "${cmd[@]}" --output_dir=out > "attempt$attempt.log" 2>&1 &
  pid=$!
  if [ "$kills" -ge "$min_kills" ] && [ "$mid_write" -gt 0 ]; then  # enough: this one runs to the end
    wait "$pid"; status=$?
    [ "$status" -eq 0 ] || { cat "attempt$attempt.log"; fail "the last attempt ended with status $status"; break; }
    echo "attempt $attempt: ran to the end"
    finished=1
    break
  fi
  if [ "$attempt" -gt 1 ] && [ $((RANDOM % 4)) -eq 0 ]; then
    when="start"
    delay=$(draw_ms "$startup")
  else
    when="first step"
    wait_for_training "attempt$attempt.log" "$pid"
    # The latest start-up measured: the first run's also filled the token cache, the later
    # ones read it (under ASan 11 s against 3 s).
    kill -0 "$pid" 2> /dev/null && startup=$(( $(now_ms) - launched ))
    delay=$(draw_ms "$window")
  fi
  sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
  if ! kill -9 "$pid" 2> /dev/null; then  # it ended before its kill
    wait "$pid"; status=$?
    [ "$status" -eq 0 ] || { cat "attempt$attempt.log"; fail "attempt $attempt ended with status $status"; break; }
    echo "attempt $attempt: finished before its kill ${delay} ms after its $when, after $kills kills ($mid_write inside a write): starting over in a fresh directory"
    rm -rf out; attempt=0 kills=0 mid_write=0
    continue
  fi
  wait "$pid" 2> /dev/null
  kills=$((kills + 1)) total_kills=$((total_kills + 1))
  leftover=$(ls -d out/checkpoint-*.tmp-* 2> /dev/null | tr '\n' ' ')
  [ -n "$leftover" ] && mid_write=$((mid_write + 1))
  echo "attempt $attempt: SIGKILL ${delay} ms after its $when:" \
       "$(grep -cs '"type":"train"' out/metrics.jsonl) train lines, checkpoints:" \
       "$(ls -d out/checkpoint-[0-9]* 2> /dev/null | grep -v tmp | sed 's|out/||' | tr '\n' ' ')${leftover:+inside a write: $leftover}"
done

[ "$finished" -eq 1 ] || { fail "no series of kills finished within $total_kills kills"; exit "$failures"; }
[ "$mid_write" -gt 0 ] || fail "none of $kills kills landed inside a checkpoint write: the test lost its point"
for f in model.safetensors checkpoint-$steps/model.safetensors checkpoint-$steps/optimizer.safetensors; do
  cmp -s "whole/$f" "out/$f" || fail "$f differs from the uninterrupted run's"
done
if ! diff <(without_run_history whole/metrics.jsonl) <(without_run_history out/metrics.jsonl) > metrics.diff; then
  head -n 20 metrics.diff; fail "metrics.jsonl is not the uninterrupted run's line for line"
fi
for step in $(seq 1 "$steps"); do
  [ "$(grep -c "\"type\":\"train\",\"step\":$step," out/metrics.jsonl)" -eq 1 ] || fail "step $step not once in metrics.jsonl"
done
ls -d out/*.tmp-* > /dev/null 2>&1 && fail "a temporary checkpoint is left: $(ls -d out/*.tmp-*)"
[ "$failures" -eq 0 ] &&
  echo "$kills random kills ($mid_write inside a checkpoint write): final weights, checkpoint-$steps and metrics.jsonl as uninterrupted"
exit "$failures"
