#!/usr/bin/env bash
# SIGTERM (a cluster's preemption) and SIGINT (Ctrl-C) stop a run cleanly: the current
# optimizer step finishes, a checkpoint of it is saved, one line says so, and the status is
# the conventional 128 + signal. Running the same command again resumes from that checkpoint:
# final weights byte-identical to an uninterrupted run's (cmp: the CPU trainer is
# bit-reproducible for a fixed thread count) and metrics.jsonl line for line the same, timing
# fields aside, so each step once. Under mpirun the signal reaches one rank only (rank 1):
# all ranks must agree to stop after the same step, and rank 0 saves it.
# The embedded model, 40 steps, a scheduled checkpoint every 10 (the signal's is in between).
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
head -n 101 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
cmd=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir="$TEST_TMPDIR/cache" --max_steps=40
     --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --save_steps=10 --eval_steps=5)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
train_lines() { cat "$1" 2> /dev/null | grep -c '"type":"train"'; }
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/metrics_lines.sh"

descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
# SIGNAL DIR LOG [mpirun...]: starts the run, sends SIGNAL once 3 steps are logged (to rank 1
# under mpirun), waits; the status in $status.
run_and_signal() {
  local signal=$1 dir=$2 log=$3; shift 3
  "$@" "$finetune" "${cmd[@]}" --output_dir="$dir" > "$log" 2>&1 &
  local pid=$! waited=0
  while [ "$(train_lines "$dir/metrics.jsonl")" -lt 3 ] && kill -0 "$pid" 2> /dev/null && [ "$waited" -lt 6000 ]; do
    sleep 0.02; waited=$((waited + 1))
  done
  local target=$pid
  if [ $# -gt 0 ]; then  # mpirun: the process whose environment says rank 1
    for child in $(descendants "$pid"); do
      tr '\0' '\n' < "/proc/$child/environ" 2> /dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && target=$child
    done
    [ "$target" != "$pid" ] || fail "$dir: rank 1's process not found among mpirun's children"
  fi
  kill -"$signal" "$target"
  wait "$pid"
  status=$?
}

# STATUS SIGNAL_NAME DIR LOG: the stopped run's status, line, checkpoint and metrics.
check_stopped() {
  local expected=$1 name=$2 dir=$3 log=$4
  [ "$status" -eq "$expected" ] || { cat "$log"; fail "$dir: status $status, expected $expected"; return; }
  local steps; steps=$(train_lines "$dir/metrics.jsonl")
  local line="xlmr_finetune: stopped by $name after step $steps of 40: checkpoint-$steps saved; run the same command again to resume"
  [ "$(grep -c 'stopped by' "$log")" -eq 1 ] && grep -qxF "$line" "$log" || { cat "$log"; fail "$dir: expected the one line '$line'"; }
  [ "$steps" -lt 40 ] || fail "$dir: the signal came after the last step: the case lost its point"
  [ -f "$dir/checkpoint-$steps/trainer_state.json" ] && grep -q "\"global_step\": $steps," "$dir/checkpoint-$steps/trainer_state.json" ||
    fail "$dir: no checkpoint-$steps of the step it stopped after"
  [ ! -e "$dir/model.safetensors" ] || fail "$dir: a stopped run wrote the final model"
  echo "$dir: $name -> status $status after step $steps, checkpoint-$steps saved"
}

# DIR WHOLE LOG [mpirun...]: the same command again must finish the run as WHOLE did.
check_rerun() {
  local dir=$1 whole=$2 log=$3; shift 3
  "$@" "$finetune" "${cmd[@]}" --output_dir="$dir" > "$log" 2>&1 || { cat "$log"; fail "$dir: the rerun failed"; return; }
  grep -q '^Checkpoint detected, resuming training at' "$log" || { cat "$log"; fail "$dir: the rerun did not resume"; }
  cmp -s "$whole/model.safetensors" "$dir/model.safetensors" || fail "$dir: final weights differ from the uninterrupted run's"
  diff <(without_run_history "$whole/metrics.jsonl") <(without_run_history "$dir/metrics.jsonl") > metrics.diff ||
    { head -n 20 metrics.diff; fail "$dir: metrics.jsonl is not the uninterrupted run's"; }
  echo "$dir: rerun resumed; final weights and metrics.jsonl ($(train_lines "$dir/metrics.jsonl") train lines) as uninterrupted"
}

"$finetune" "${cmd[@]}" --output_dir=whole > whole.log 2>&1 || { cat whole.log; echo "uninterrupted run failed"; exit 1; }

run_and_signal TERM term term.log
check_stopped 143 SIGTERM term term.log
check_rerun term whole term_rerun.log

run_and_signal INT int int.log
check_stopped 130 SIGINT int int.log

# A rank that stopped alone would leave the other waiting in a collective: the limit turns
# that hang into a failure (a run takes seconds).
mpi=(timeout -k 10 120 mpirun --oversubscribe -np 2)
"${mpi[@]}" "$finetune" "${cmd[@]}" --output_dir=whole_mpi > whole_mpi.log 2>&1 || { cat whole_mpi.log; echo "uninterrupted mpirun failed"; exit 1; }
run_and_signal TERM term_mpi term_mpi.log "${mpi[@]}"
# mpirun reports a rank's non-zero status as its own.
check_stopped 143 SIGTERM term_mpi term_mpi.log
check_rerun term_mpi whole_mpi term_mpi_rerun.log "${mpi[@]}"

[ "$failures" -eq 0 ] && echo "all stops clean"
exit "$failures"
