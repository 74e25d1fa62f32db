#!/usr/bin/env bash
# --resume_from_checkpoint continues bit-exactly: a run stopped at a checkpoint and resumed to
# step 16 writes the same metrics lines (timing fields aside) and the same final weights, byte
# for byte, as an uninterrupted 16-step run. Dropout is on, so the RNG keys, the data cursor,
# the AdamW moments and step count, the LR schedule and the loss-scaler state must all be
# restored. Cases:
#   fp32          resumed at step 8;
#   fp16          resumed at step 8, a short growth interval making the loss scale grow;
#   fp16_skipped  --loss_scale_init=8e6: steps 1-4 overflow and are skipped (and later ones as
#                 the scale grows back), so at step 8 the optimizer and the LR schedule have
#                 counted fewer updates than steps: both counters must be restored apart;
#   epochs        40 training rows (evaluated on themselves: 300 dev rows hold labels they
#                 lack), global batch 8: 5 steps per epoch; resumed from step 5,
#                 exactly at an epoch's end (the cursor wraps to the next epoch's shuffle), and
#                 the resumed run then crosses the boundaries after steps 10 and 15;
#   mpirun        the fp16 case on 2 ranks (mpirun -np 2, per-device batch 2), resumed at step 8
#                 under mpirun as well.
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
data_dir="$RUNFILES_DIR/xlmr_trainer/recipes/data/langid"
head -n 301 "$data_dir/dev.tsv" > heldout.tsv
head -n 41 "$data_dir/train.tsv" > train40.tsv
common=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir=cache --max_steps=16
        --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --learning_rate=1e-3
        --warmup_steps=3 --save_total_limit=0)
fp16=(--fp16 --loss_scale_growth_interval=3 --loss_scale_init=1024)
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/metrics_lines.sh"
strip_timing() { without_run_history "$1" | grep '"type":"train"'; }
field() { grep "\"type\":\"train\",\"step\":$2," "$1" | sed -nE "s/.*\"$3\":([^,}]*).*/\1/p"; }

# NAME RESUME_STEP LAUNCHER... -- FLAGS...: the whole run, then the resumed one, compared.
check_resume() {
  local name=$1 at=$2; shift 2
  local launcher=()
  while [ "$1" != "--" ]; do launcher+=("$1"); shift; done
  shift
  rm -rf "whole_$name" "resumed_$name"
  "${launcher[@]}" "$finetune" "${common[@]}" "$@" --save_steps="$at" --output_dir="whole_$name" > whole.log 2>&1 \
    || { cat whole.log; echo "$name: the uninterrupted run failed"; exit 1; }
  mkdir -p "resumed_$name"
  cp -r "whole_$name/checkpoint-$at" "resumed_$name/"
  "${launcher[@]}" "$finetune" "${common[@]}" "$@" --save_steps="$at" --output_dir="resumed_$name" \
    --resume_from_checkpoint=latest > resumed.log 2>&1 || { cat resumed.log; echo "$name: the resumed run failed"; exit 1; }
  strip_timing "whole_$name/metrics.jsonl" | tail -n $((16 - at)) > expected.txt
  strip_timing "resumed_$name/metrics.jsonl" > actual.txt
  [ "$(wc -l < actual.txt)" -eq $((16 - at)) ] || { cat actual.txt; echo "$name: expected $((16 - at)) resumed steps"; exit 1; }
  if ! diff expected.txt actual.txt; then echo "$name: metrics differ after resume"; exit 1; fi
  cmp "whole_$name/model.safetensors" "resumed_$name/model.safetensors" \
    || { echo "$name: final weights differ after resume"; exit 1; }
  echo "$name: $((16 - at)) steps resumed from step $at identical, final weights identical"
}

check_resume fp32 8 -- 
check_resume fp16 8 -- "${fp16[@]}"
[ "$(field whole_fp16/metrics.jsonl 16 loss_scale)" != "" ] || { echo "no loss_scale at step 16"; exit 1; }
grep -q '"loss_scale":2048' whole_fp16/metrics.jsonl || { echo "the loss scale never grew: the test lost its point"; exit 1; }

check_resume fp16_skipped 8 -- "${fp16[@]}" --loss_scale_init=8e6
skipped_before=$(head -n 8 whole_fp16_skipped/metrics.jsonl | grep -c '"skipped":true' || true)
[ "$skipped_before" -ge 3 ] || { echo "fp16_skipped: only $skipped_before skipped steps before the checkpoint: the case lost its point"; exit 1; }
grep -q '"optimizer_steps": [0-7],' whole_fp16_skipped/checkpoint-8/trainer_state.json \
  || { cat whole_fp16_skipped/checkpoint-8/trainer_state.json; echo "fp16_skipped: optimizer_steps not below 8 at the checkpoint"; exit 1; }
echo "fp16_skipped: $skipped_before of the first 8 steps skipped"

check_resume epochs 5 -- --train_file=train40.tsv --eval_file=train40.tsv --test_file=train40.tsv
grep -q '"epoch": 1,' whole_epochs/checkpoint-5/trainer_state.json && grep -q '"step_in_epoch": 0,' whole_epochs/checkpoint-5/trainer_state.json \
  || { cat whole_epochs/checkpoint-5/trainer_state.json; echo "epochs: checkpoint-5 is not at an epoch boundary"; exit 1; }

check_resume mpirun 8 mpirun --oversubscribe -np 2 -- "${fp16[@]}" --per_device_train_batch_size=2
grep -q 'weights identical on all 2 ranks' resumed.log || { echo "mpirun: the resumed run was not on 2 ranks"; exit 1; }
