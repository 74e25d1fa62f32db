#!/usr/bin/env bash
# Running the same command twice never destroys a run (Hugging Face's output-directory rules,
# recipes/output_dir_policy.h), on short runs of the embedded model (40 steps, checkpoint
# every 4). Every comparison is exact (cmp / sha256): the CPU trainer is bit-reproducible for
# a fixed thread count, and the same command on the same machine keeps it.
#   1. killed (SIGKILL once 10 steps are logged, past checkpoint-8) and rerun: resumes, final weights and the last
#      checkpoint byte-identical to an uninterrupted run; metrics.jsonl (given a torn last line)
#      line for line the uninterrupted run's; a dead run's checkpoint-N.tmp-PID removed;
#   1b. killed during a checkpoint write: the rerun removes the temporary directory and ends
#      byte-identical, metrics line for line;
#   2. a finished run rerun: "nothing left to do", every file's sha256 unchanged;
#   3. the same under mpirun -np 2 where rank 1's view of the directory differs (its copy lacks
#      the final results): rank 0's decision holds for both, nothing changes on either side;
#   4. a non-empty directory without checkpoints, or a file as --output_dir: exit 2, one line
#      naming both flags, nothing written;
#   5. --overwrite_output_dir: killed before its first checkpoint the old run is untouched;
#      rerun to the end, the directory holds the new run alone, as a fresh run writes it;
#   6. killed before its first checkpoint (SIGKILL once 3 steps are logged, the first checkpoint
#      at step 20): the same command starts again from scratch with one line saying so, and ends
#      byte-identical to an uninterrupted run of that command, metrics line for line; the same
#      directory with a foreign file in it: exit 2, one line, nothing changed.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
head -n 301 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
cmd=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir="$TEST_TMPDIR/cache" --max_steps=40
     --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --save_steps=4 --logging_steps=1)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
hashes() { (cd "$1" && find . | sort && find . -type f | sort | xargs sha256sum); }  # DIR: names and contents
run() {  # LOG FLAGS...: the recipe in the foreground; its exit status in $status
  local log=$1; shift
  "$finetune" "$@" > "$log" 2>&1
  status=$?
}
# CONDITION LOG FLAGS...: starts the recipe and SIGKILLs it as soon as the test CONDITION holds.
run_and_kill() {
  local condition=$1 log=$2; shift 2
  "$finetune" "$@" > "$log" 2>&1 &
  local pid=$! waited=0
  while ! eval "$condition" && kill -0 "$pid" 2> /dev/null && [ "$waited" -lt 6000 ]; do
    sleep 0.02; waited=$((waited + 1))
  done
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
}

# The uninterrupted run.
run whole.log "${cmd[@]}" --output_dir=whole
[ "$status" -eq 0 ] || { cat whole.log; fail "uninterrupted run: status $status"; exit 1; }

# 1. Killed after a checkpoint, then the same command again.
# (cat, not grep on the file: grep -c prints nothing while the file does not exist yet.)
run_and_kill '[ "$(cat killed/metrics.jsonl 2> /dev/null | grep -c "\"type\":\"train\"")" -ge 10 ]' killed_first.log "${cmd[@]}" --output_dir=killed
if [ -e killed/model.safetensors ] || [ ! -d killed/checkpoint-8 ]; then
  cat killed_first.log; fail "the kill did not land between the first checkpoint and the end: the test lost its point"
fi
echo "1. killed with $(ls -d killed/checkpoint-* | tr '\n' ' ')and $(grep -c '"type":"train"' killed/metrics.jsonl) steps logged"
# What a kill during a checkpoint write and during a metrics write leave behind (the temporary
# directory's name carries the dead run's pid; the last line lacks its end).
mkdir -p killed/checkpoint-12.tmp-99999 && echo partial > killed/checkpoint-12.tmp-99999/model.safetensors
printf '{"type":"train","step":' >> killed/metrics.jsonl
run killed_rerun.log "${cmd[@]}" --output_dir=killed
[ "$status" -eq 0 ] || { cat killed_rerun.log; fail "rerun after the kill: status $status"; }
[ "$(grep -c '^Checkpoint detected, resuming training at killed/checkpoint-[0-9]* (step [0-9]* of 40)' killed_rerun.log)" -eq 1 ] ||
  { cat killed_rerun.log; fail "rerun after the kill: expected one 'Checkpoint detected, resuming' line"; }
grep '^Checkpoint detected' killed_rerun.log
# It resumed (a rerun from scratch would give the same weights too): its first step follows the checkpoint.
resumed_at=$(sed -nE 's/^Checkpoint detected, resuming training at killed\/checkpoint-([0-9]+) .*/\1/p' killed_rerun.log)
first_step=$(grep -m1 -oE '^step [0-9]+/40' killed_rerun.log)
[ -n "$resumed_at" ] && [ "$first_step" = "step $((resumed_at + 1))/40" ] ||
  fail "rerun after the kill: first step '$first_step', expected step $((resumed_at + 1))/40 (resumed at $resumed_at)"
echo "   rerun resumed at checkpoint-$resumed_at, first step trained: $first_step"
for f in model.safetensors checkpoint-40/model.safetensors checkpoint-40/optimizer.safetensors; do
  cmp -s "whole/$f" "killed/$f" || fail "rerun after the kill: $f differs from the uninterrupted run's"
done
echo "   final weights and checkpoint-40 byte-identical to the uninterrupted run"
# metrics.jsonl: the resume cut it back to its checkpoint, so it is line for line the
# uninterrupted run's (timing fields aside): each step once, every line whole.
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/metrics_lines.sh"
if ! diff <(without_run_history whole/metrics.jsonl) <(without_run_history killed/metrics.jsonl) > metrics.diff; then
  head -n 20 metrics.diff; fail "rerun after the kill: metrics.jsonl is not the uninterrupted run's"
fi
[ "$(grep -c '"type":"train"' killed/metrics.jsonl)" -eq 40 ] || fail "rerun after the kill: expected 40 train lines"
ls -d killed/*.tmp-* > /dev/null 2>&1 && fail "rerun after the kill: a temporary checkpoint directory is left: $(ls -d killed/*.tmp-*)"
grep -q "removed killed/checkpoint-12.tmp-99999" killed_rerun.log || fail "rerun after the kill: no line about the removed temporary checkpoint"
echo "   metrics.jsonl line for line the uninterrupted run's (40 train lines), checkpoint-12.tmp-99999 removed"

# 1b. Killed during a checkpoint write: every step saves (--save_steps=1) and the SIGKILL
# comes the moment a temporary checkpoint directory exists after checkpoint-2 (a kill during
# the first checkpoint is a run that never reached one, case 6), up to 3 tries:
# the write can end between the look and the kill. The rerun removes it and finishes as the uninterrupted run.
for try in 1 2 3; do
  rm -rf mid_save
  run_and_kill '[ -d mid_save/checkpoint-2 ] && ls -d mid_save/checkpoint-*.tmp-* > /dev/null 2>&1' mid_save_first.log "${cmd[@]}" --save_steps=1 --output_dir=mid_save
  leftover=$(ls -d mid_save/checkpoint-*.tmp-* 2> /dev/null | head -n 1)
  [ -n "$leftover" ] && break
done
if [ -z "$leftover" ] || [ -e mid_save/model.safetensors ]; then
  fail "1b: three kills missed every checkpoint write: the case lost its point"
else
  failures_before=$failures
  run mid_save_rerun.log "${cmd[@]}" --save_steps=1 --output_dir=mid_save
  [ "$status" -eq 0 ] || { cat mid_save_rerun.log; fail "1b: rerun after the kill during a save: status $status"; }
  grep -q "removed $leftover" mid_save_rerun.log || fail "1b: no line about removing $leftover"
  ls -d mid_save/*.tmp-* > /dev/null 2>&1 && fail "1b: temporary checkpoint left after the rerun"
  cmp -s whole/model.safetensors mid_save/model.safetensors || fail "1b: final weights differ from the uninterrupted run's"
  diff <(without_run_history whole/metrics.jsonl) <(without_run_history mid_save/metrics.jsonl) > metrics.diff ||
    { head -n 20 metrics.diff; fail "1b: metrics.jsonl is not the uninterrupted run's"; }
  [ "$failures" -eq "$failures_before" ] && echo "1b. killed while writing $leftover (try $try); rerun removed it, final weights and metrics.jsonl as uninterrupted"
fi

# 2. The finished run, rerun.
hashes whole > whole.before
run finished.log "${cmd[@]}" --output_dir=whole
[ "$status" -eq 0 ] || fail "rerun of a finished run: status $status"
grep -q "nothing left to do" finished.log || { cat finished.log; fail "rerun of a finished run: no 'nothing left to do'"; }
hashes whole | cmp -s - whole.before || fail "rerun of a finished run changed files in whole/"
echo "2. $(grep 'nothing left to do' finished.log)"
echo "   $(grep -c . whole.before) names and hashes unchanged"

# 3. Under mpirun, rank 0 decides: rank 1 (another working directory) sees no final results in
# its copy and would resume on its own, then wait in a collective for rank 0, which is done.
mkdir -p host_a host_b
cp heldout.tsv host_a/ && cp heldout.tsv host_b/
cp -r whole host_a/out && cp -r whole host_b/out && rm host_b/out/eval_results.json
hashes host_a/out > a.before && hashes host_b/out > b.before
timeout 120 mpirun --oversubscribe -np 1 --wdir "$TEST_TMPDIR/host_a" "$finetune" "${cmd[@]}" --output_dir=out \
  : -np 1 --wdir "$TEST_TMPDIR/host_b" "$finetune" "${cmd[@]}" --output_dir=out > mpirun.log 2>&1
status=$?
[ "$status" -eq 0 ] || { cat mpirun.log; fail "mpirun -np 2 on a finished run: status $status (124: hung)"; }
[ "$(grep -c 'nothing left to do' mpirun.log)" -eq 1 ] || { cat mpirun.log; fail "mpirun: expected one 'nothing left to do'"; }
hashes host_a/out | cmp -s - a.before || fail "mpirun: rank 0's directory changed"
hashes host_b/out | cmp -s - b.before || fail "mpirun: rank 1's directory changed"
echo "3. mpirun -np 2: status $status, one 'nothing left to do' line, both directories unchanged"

# 4. Not a run's directory: stop before any work.
mkdir -p notes && echo "mine" > notes/notes.txt && echo '{}' > notes/metrics.jsonl
hashes notes > notes.before
"$finetune" "${cmd[@]}" --output_dir=notes > stdout.txt 2> stderr.txt
status=$?
if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || ! grep -q -- "--overwrite_output_dir" stderr.txt ||
   ! grep -q -- "--resume_from_checkpoint" stderr.txt; then
  cat stderr.txt; fail "non-empty directory without checkpoints: status $status, expected 2 and one line naming both flags"
fi
hashes notes | cmp -s - notes.before || fail "non-empty directory without checkpoints: files changed"
[ -e notes.overwriting ] && fail "non-empty directory without checkpoints: a staging directory was written"
echo "4. status $status: $(cat stderr.txt)"
echo "text" > a_file
"$finetune" "${cmd[@]}" --output_dir=a_file > stdout.txt 2> stderr.txt
status=$?
[ "$status" -eq 2 ] && [ "$(cat stderr.txt)" = "xlmr_finetune: --output_dir=a_file: exists and is not a directory" ] ||
  { cat stderr.txt; fail "a file as --output_dir: status $status"; }
echo "   status $status: $(cat stderr.txt)"

# 5. --overwrite_output_dir replaces the finished run in whole/ with another (seed 7, 30 steps,
# one checkpoint at the end), compared with the same run into a new directory.
new=("${cmd[@]}" --seed=7 --max_steps=30 --save_steps=0)
run_and_kill '[ -s whole.overwriting/metrics.jsonl ]' overwrite_killed.log "${new[@]}" --output_dir=whole --overwrite_output_dir
ls whole.overwriting | grep -qx 'checkpoint-[0-9]*' && fail "the kill came after the new run's first checkpoint: the test lost its point"
[ -d whole.overwriting ] || { cat overwrite_killed.log; fail "--overwrite_output_dir: no staging directory"; }
hashes whole | cmp -s - whole.before || fail "--overwrite_output_dir killed before its first checkpoint: the old run changed"
echo "5. killed before its first checkpoint ($(grep -c '"type":"train"' whole.overwriting/metrics.jsonl) steps logged): whole/ unchanged, whole.overwriting/ holds $(ls whole.overwriting | tr '\n' ' ')"
mkdir -p whole.overwriting/checkpoint-30.tmp-1  # as if killed while writing its checkpoint
run overwrite.log "${new[@]}" --output_dir=whole --overwrite_output_dir
[ "$status" -eq 0 ] || { cat overwrite.log; fail "--overwrite_output_dir: status $status"; }
run fresh.log "${new[@]}" --output_dir=fresh
[ "$status" -eq 0 ] || { cat fresh.log; fail "fresh run: status $status"; }
[ -e whole.overwriting ] && fail "--overwrite_output_dir: the staging directory is left behind"
[ "$(ls whole | tr '\n' ' ')" = "checkpoint-30 config.json eval_results.json manifest.json metrics.jsonl model.safetensors predict_predictions.jsonl prediction_args.json sentencepiece.bpe.model trainer_state.json " ] ||
  fail "--overwrite_output_dir: whole/ holds $(ls whole | tr '\n' ' ')"
diff <(without_run_history whole/metrics.jsonl) <(without_run_history fresh/metrics.jsonl) > /dev/null ||
  fail "--overwrite_output_dir: metrics.jsonl is not the new run's alone"
for f in model.safetensors eval_results.json checkpoint-30/model.safetensors checkpoint-30/optimizer.safetensors; do
  cmp -s "whole/$f" "fresh/$f" || fail "--overwrite_output_dir: $f differs from a fresh run's"
done
echo "   rerun: whole/ holds $(ls whole | tr '\n' ' ')= a fresh run's files; metrics.jsonl $(grep -c '"type":"train"' whole/metrics.jsonl) steps, the new run's"

# 6. Killed before its first checkpoint, then the same command again.
late=("${cmd[@]}" --save_steps=20)
run late_whole.log "${late[@]}" --output_dir=late_whole
[ "$status" -eq 0 ] || { cat late_whole.log; fail "6: uninterrupted run: status $status"; }
for try in 1 2 3; do
  rm -rf early
  run_and_kill '[ -f early/metrics.jsonl ] && [ "$(grep -c "\"type\":\"train\"" early/metrics.jsonl)" -ge 3 ]' early_first.log "${late[@]}" --output_dir=early
  ls -d early/checkpoint-[0-9]* > /dev/null 2>&1 || break
done
if ls -d early/checkpoint-[0-9]* 2> /dev/null | grep -qv tmp; then
  fail "6: three kills came after the first checkpoint: the case lost its point"
else
  echo "6. killed before its first checkpoint: early/ holds $(ls early | tr '\n' ' ')($(grep -c '"type":"train"' early/metrics.jsonl) steps logged)"
  cp -r early early_foreign && echo "mine" > early_foreign/notes.txt
  hashes early_foreign > foreign.before
  "$finetune" "${late[@]}" --output_dir=early_foreign > stdout.txt 2> stderr.txt
  status=$?
  [ "$status" -eq 2 ] && [ "$(wc -l < stderr.txt)" -eq 1 ] && grep -q -- "--overwrite_output_dir" stderr.txt ||
    { cat stderr.txt; fail "6: a foreign file beside a killed run: status $status, expected 2 and one line"; }
  hashes early_foreign | cmp -s - foreign.before || fail "6: a foreign file beside a killed run: files changed"
  echo "   with a foreign file: status $status: $(cut -c1-100 stderr.txt)..."
  run early_rerun.log "${late[@]}" --output_dir=early
  [ "$status" -eq 0 ] || { cat early_rerun.log; fail "6: rerun: status $status"; }
  [ "$(grep -c "^--output_dir=early holds only what a run writes before its first checkpoint (.*metrics.jsonl): that run never reached a checkpoint; starting it again from scratch$" early_rerun.log)" -eq 1 ] ||
    { cat early_rerun.log; fail "6: rerun: expected one line saying the run starts again"; }
  grep -q '^step 1/40' early_rerun.log || fail "6: rerun did not start at step 1"
  for f in model.safetensors eval_results.json checkpoint-40/model.safetensors checkpoint-40/optimizer.safetensors; do
    cmp -s "late_whole/$f" "early/$f" || fail "6: rerun: $f differs from the uninterrupted run's"
  done
  diff <(without_run_history late_whole/metrics.jsonl) <(without_run_history early/metrics.jsonl) > metrics.diff ||
    { head -n 20 metrics.diff; fail "6: rerun: metrics.jsonl is not the uninterrupted run's"; }
  echo "   rerun: $(grep -m1 'never reached a checkpoint' early_rerun.log | cut -c1-120)...; final weights, checkpoint-40 and metrics.jsonl as uninterrupted"
fi

[ "$failures" -eq 0 ] && echo "every rerun kept or replaced the run as the rules say"
exit "$failures"
