#!/usr/bin/env bash
# --resume_from_checkpoint continues bit-exactly: a run stopped at step 8 and resumed to step 16
# writes the same metrics lines (timing fields aside) and the same final weights, byte for byte,
# as an uninterrupted 16-step run. Dropout is on and fp16 with a short growth interval makes
# the loss scale change during the run, so the RNG keys, the data cursor, the AdamW moments and
# step count, the LR schedule and the loss-scaler state must all be restored.
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
head -n 301 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
common=(--eval_file=heldout.tsv --test_file=heldout.tsv --cache_dir=cache --max_steps=16
        --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --learning_rate=1e-3
        --warmup_steps=3 --save_total_limit=0)
for precision in fp32 fp16; do
  flags=(); [ "$precision" = fp16 ] && flags=(--fp16 --loss_scale_growth_interval=3 --loss_scale_init=1024)
  "$finetune" "${common[@]}" "${flags[@]}" --save_steps=8 --output_dir="whole_$precision" > whole.log 2>&1 \
    || { cat whole.log; exit 1; }
  mkdir -p "resumed_$precision"
  cp -r "whole_$precision/checkpoint-8" "resumed_$precision/"
  "$finetune" "${common[@]}" "${flags[@]}" --save_steps=8 --output_dir="resumed_$precision" \
    --resume_from_checkpoint=latest > resumed.log 2>&1 || { cat resumed.log; exit 1; }
  # Timings, and the allocator's reserved memory, which depends on the process's history (the
  # resumed process never ran steps 1-8), are not training results.
  strip_timing() { grep '"type":"train"' "$1" | sed -E 's/"tokens_per_second":[^,]*,//; s/,"peak_reserved_bytes":[^,]*//; s/,"elapsed_seconds":[^}]*//'; }
  strip_timing "whole_$precision/metrics.jsonl" | tail -n 8 > expected.txt
  strip_timing "resumed_$precision/metrics.jsonl" > actual.txt
  if ! diff expected.txt actual.txt; then echo "$precision: metrics differ after resume"; exit 1; fi
  cmp "whole_$precision/model.safetensors" "resumed_$precision/model.safetensors" \
    || { echo "$precision: final weights differ after resume"; exit 1; }
  echo "$precision: 8 resumed steps identical, final weights identical"
done
grep -q '"loss_scale":2048' whole_fp16/metrics.jsonl || { echo "the loss scale never grew: the test lost its point"; exit 1; }
