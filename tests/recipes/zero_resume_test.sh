#!/usr/bin/env bash
# A checkpoint resumes with another number of ranks: optimizer.safetensors holds the moments
# whole, in the parameters' order, whatever --zero_stage and world size saved them. The global
# batch stays 8 (per-device batch 2 x 4 ranks, 4 x 2 ranks, 8 x 1 process); 300 rows of the
# embedded data, dropout 0 (dropout masks are keyed by the micro-batch, which another split
# changes), 20 steps, checkpoints at 10 and 20, --max_grad_norm=0.5, --zero_stage=1 unless said.
# OpenMPI's all-reduce and reduce-scatter algorithms are pinned as in zero_stage_test.sh, so
# that stage 0 and stage 1 add in the same order. Cases, against the uninterrupted run:
#   4 -> 4 ranks, --zero_stage=1 and --zero_stage=0: the final weights and checkpoint-20's
#     moments BITWISE equal (the moments gathered from 4 shards, read back whole or as 4 shards,
#     continue exactly: they round-tripped bit for bit);
#   4 -> 2 ranks, 4 -> 1 process, and 2 -> 4 ranks: equal within 1e-6 absolute (measured 7.5e-9
#     (4 -> 2, 4 -> 1) and 6e-8 (2 -> 4) on the weights after 10 resumed steps: another split of the batch over ranks sums each
#     gradient in another order, 1-ulp differences that Adam carries along; a moment read at the
#     wrong place moves weights by ~1e-4 at this learning rate);
#   each resume with another world size prints the one line saying so and what the global batch
#   is; trainer_state.json records the world size that saved it.
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
compare="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
train_tsv="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_allreduce_algorithm=2
export OMPI_MCA_coll_tuned_reduce_scatter_algorithm=1
head -n 301 "$train_tsv" > train.tsv
common=(--train_file=train.tsv --eval_strategy=no --max_steps=20 --save_steps=10 --save_total_limit=0 --dropout=0
        --learning_rate=1e-3 --adam_epsilon=1e-4 --logging_steps=10 --cache_dir=cache --max_grad_norm=0.5)
failures=0
fail() { echo "FAILED ($case): $*"; failures=$((failures + 1)); }

launch() {  # RANKS FLAGS...: the binary on RANKS ranks (1: one plain process), batch 8 in all
  local ranks=$1
  shift
  if [ "$ranks" -eq 1 ]; then
    "$finetune" "${common[@]}" --per_device_train_batch_size=8 "$@"
  else
    mpirun --oversubscribe -np "$ranks" "$finetune" "${common[@]}" --per_device_train_batch_size=$((8 / ranks)) "$@"
  fi
}

whole() {  # DIR RANKS: the uninterrupted run
  case="uninterrupted on $2"
  launch "$2" --zero_stage=1 --output_dir="$1" > "$1.log" 2>&1 || { cat "$1.log"; fail "run"; exit 1; }
  grep -q '"world_size": '"$2" "$1/checkpoint-10/trainer_state.json" || fail "trainer_state.json lacks world_size $2"
}

# FROM_DIR SAVED_RANKS RANKS STAGE TOLERANCE: resumes FROM_DIR's checkpoint-10 and compares.
resume() {
  local from=$1 saved=$2 ranks=$3 stage=$4 tolerance=$5 dir="resumed_${2}_to_${3}_stage$4"
  case="$saved -> $ranks ranks, --zero_stage=$stage"
  rm -rf "$dir" && mkdir "$dir" && cp -r "$from/checkpoint-10" "$dir/"
  launch "$ranks" --zero_stage="$stage" --output_dir="$dir" --resume_from_checkpoint=latest > "$dir.log" 2>&1 ||
    { cat "$dir.log"; fail "resumed run"; return; }
  local line="$dir/checkpoint-10 was saved by $saved ranks, resumed by $ranks: the global batch is still 8"
  if [ "$saved" -ne "$ranks" ]; then
    [ "$(grep -c "was saved by" "$dir.log")" -eq 1 ] && grep -q "$line" "$dir.log" ||
      fail "expected one line '$line...'"
  else
    ! grep -q "was saved by" "$dir.log" || fail "a line about the world size, which did not change"
  fi
  grep -q '"world_size": '"$ranks" "$dir/checkpoint-20/trainer_state.json" || fail "checkpoint-20 lacks world_size $ranks"
  echo "$case:"
  echo -n "  weights: " && "$compare" "$from/model.safetensors" "$dir/model.safetensors" --tolerance="$tolerance" ||
    fail "final weights differ by more than $tolerance"
  echo -n "  moments at step 20: " &&
    "$compare" "$from/checkpoint-20/optimizer.safetensors" "$dir/checkpoint-20/optimizer.safetensors" \
      --tolerance="$tolerance" || fail "moments differ by more than $tolerance"
}

whole whole4 4
resume whole4 4 4 1 0
resume whole4 4 4 0 0
resume whole4 4 2 1 1e-6
resume whole4 4 1 1 1e-6
resume whole4 4 1 0 1e-6
whole whole2 2
resume whole2 2 4 1 1e-6
[ "$failures" -eq 0 ] && echo "checkpoints resume on any number of ranks"
exit "$failures"
