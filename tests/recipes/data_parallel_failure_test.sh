#!/usr/bin/env bash
# A misconfigured or failing rank stops the whole mpirun job, quickly and with one line that
# names the rank, instead of training something else or leaving the other rank waiting in a
# collective forever (each case runs under a 120 s timeout; all finish in a few seconds):
#   1. ranks started with different flags (MPMD launch): exit 2, rank 1 names the flags;
#   2. rank 1 cannot read the training file (its working directory lacks it; the flags are
#      identical): exit 2 on both ranks before any output is written, rank 1 says why;
#   3. rank 0 fails once training has started (its --output_dir cannot be created: the parent
#      is a file): rank 0 says why
#      and MPI_Abort stops rank 1, which would otherwise wait in the first all-reduce.
#   4. rank 1 dies mid-training (SIGABRT once rank 0 has logged a step, as a failed internal
#      check would abort it): the job stops with a non-zero status instead of rank 0 waiting
#      forever in the next all-reduce, and no rank is left running.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
train_tsv="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mkdir -p host_a host_b
head -n 201 "$train_tsv" > host_a/train.tsv
common=(--train_file=train.tsv --eval_file=train.tsv --max_steps=2 --cache_dir="$TEST_TMPDIR/cache"
        --output_dir=out)
failures=0

expect() {  # CASE EXPECTED_STATUS EXPECTED_LINE: checks the last run (status, log.txt)
  if [ "$status" -eq 124 ]; then
    echo "FAILED ($1): the job hung (killed by the timeout)"; failures=$((failures + 1)); return
  fi
  if [ "$status" -ne "$2" ] || [ "$(grep -cF -- "$3" log.txt)" -ne 1 ]; then
    echo "FAILED ($1): status $status (expected $2), expected one line with '$3':"
    cat log.txt; failures=$((failures + 1)); return
  fi
  echo "$1: status $status, $(grep -F -- "$3" log.txt)"
}

# 1. Different flags on the two ranks.
timeout 120 mpirun --oversubscribe -np 1 --wdir "$TEST_TMPDIR/host_a" "$finetune" "${common[@]}" \
  : -np 1 --wdir "$TEST_TMPDIR/host_a" "$finetune" "${common[@]}" --learning_rate=1e-3 > log.txt 2>&1
status=$?
expect "flags differ" 2 "xlmr_finetune: rank 1: --learning_rate differs from rank 0's (here '0.001', on rank 0 '2e-05')"
[ -e host_a/out ] && { echo "FAILED (flags differ): output written"; failures=$((failures + 1)); }

# 2. Rank 1's working directory has no train.tsv.
timeout 120 mpirun --oversubscribe -np 1 --wdir "$TEST_TMPDIR/host_a" "$finetune" "${common[@]}" \
  : -np 1 --wdir "$TEST_TMPDIR/host_b" "$finetune" "${common[@]}" > log.txt 2>&1
status=$?
expect "rank 1 lacks its data" 2 "xlmr_finetune: rank 1: train.tsv"
[ -e host_a/out ] && { echo "FAILED (rank 1 lacks its data): output written"; failures=$((failures + 1)); }

# 3. Rank 0 fails after preparation: its --output_dir cannot be created (an --output_dir that
# is itself a file is refused before any work, with status 2).
cp host_a/train.tsv host_b/train.tsv
touch host_a/blocker
timeout 120 mpirun --oversubscribe -np 1 --wdir "$TEST_TMPDIR/host_a" "$finetune" "${common[@]}" --output_dir=blocker/out \
  : -np 1 --wdir "$TEST_TMPDIR/host_b" "$finetune" "${common[@]}" --output_dir=blocker/out > log.txt 2>&1
status=$?
expect "rank 0 fails in training" 1 "xlmr_finetune: rank 0: --output_dir=blocker/out"

# 4. Rank 1 aborts while training (a run long enough never to finish by itself).
rm -rf host_a/out
timeout 120 mpirun --oversubscribe -np 2 --wdir "$TEST_TMPDIR/host_a" "$finetune" "${common[@]}" \
  --max_steps=1000000 --logging_steps=1 > log.txt 2>&1 &
launcher=$!
descendants() {  # PID -> every process below it
  local child
  for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done
}
for _ in $(seq 1200); do  # up to 120 s for rank 0's first train line
  grep -qs '"type":"train"' host_a/out/metrics.jsonl && break
  sleep 0.1
done
rank1="" ranks=()
for pid in $(descendants "$launcher"); do
  rank=$(tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
  [ -n "$rank" ] || continue
  ranks+=("$pid")
  [ "$rank" = 1 ] && rank1=$pid
done
if ! grep -qs '"type":"train"' host_a/out/metrics.jsonl || [ -z "$rank1" ]; then
  echo "FAILED (rank 1 dies in training): training never started or rank 1 not found"; cat log.txt
  failures=$((failures + 1))
  kill "$launcher" 2> /dev/null
else
  kill -ABRT "$rank1"
  wait "$launcher"
  status=$?
  if [ "$status" -eq 124 ]; then
    echo "FAILED (rank 1 dies in training): the job hung (killed by the timeout)"; failures=$((failures + 1))
  elif [ "$status" -eq 0 ]; then
    echo "FAILED (rank 1 dies in training): exit status 0"; cat log.txt; failures=$((failures + 1))
  else
    echo "rank 1 dies in training: status $status, $(grep -c '"type":"train"' host_a/out/metrics.jsonl) step(s) logged"
  fi
  for pid in "${ranks[@]}"; do
    if kill -0 "$pid" 2> /dev/null; then
      echo "FAILED (rank 1 dies in training): rank process $pid still running"; failures=$((failures + 1))
      kill -KILL "$pid"
    fi
  done
fi

[ "$failures" -eq 0 ] && echo "every failing launch stopped the whole job"
exit "$failures"
