#!/usr/bin/env bash
# --task=question_answering composes with the rest of the trainer, end to end through
# xlmr_finetune, 6 optimizer steps, learning rate 1e-3, --adam_epsilon=1e-4 (see
# data_parallel_test.sh: with 1e-8, parameters whose gradient is rounding noise take full steps
# of random sign), on 16 SQuAD v2 examples made here: each context is an ordering of the same
# eight colour words, the question is always "which colour follows gold", the answer the word
# after "gold" (none when gold is last: 2 unanswerable). Every window therefore has the same
# length, so no batch holds padding: the span loss, like HF's, puts a batch's padding positions
# into its softmaxes (docs/DECISIONS.md), which would make a batch of 8 and two of 4 differ by
# more than rounding. Each case against a reference run:
#   checkpointing   --gradient_checkpointing: the same bytes (recompute is exact, dropout on);
#   accumulation    per-device batch 4 x 2 micro-steps against batch 8 (dropout 0): final
#                   weights within 1e-6 (rounding: the windows' loss terms summed in another
#                   order; a loss normalised per micro-batch instead of per global batch moves
#                   them by ~1e-4 at this learning rate);
#   mpirun          mpirun -np 2 with per-device batch 4 against one process with batch 8
#                   (dropout 0): weights within 1e-6, eval_loss, eval_f1 and eval_total equal
#                   within 1e-6 relative (evaluation sharded over the ranks and gathered);
#   resume          stopped at the checkpoint of step 3 and resumed (dropout on, --fp16): the
#                   same metrics lines and the same final bytes as the uninterrupted run;
#   fp16, bf16      train and evaluate: 6 finite losses, each within 2e-2 relative of fp32's
#                   (half-precision matrix products round to 2^-11 / 2^-8 relative).
# Args: xlmr_finetune, compare_models.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
compare=$(absolute "$2")
cd "$TEST_TMPDIR"
# The examples: 8 rotations of the colour list, forwards and backwards.
awk 'BEGIN {
  split("red green blue gold pink gray teal navy", w, " ")
  for (direction = 0; direction < 2; ++direction) for (r = 0; r < 8; ++r) {
    context = ""; after = ""; start = -1
    for (i = 0; i < 8; ++i) {
      k = direction ? 8 - ((r + i) % 8) : 1 + (r + i) % 8
      if (previous == "gold") { after = w[k]; start = length(context) + (i > 0) }
      context = context (i > 0 ? " " : "") w[k]; previous = w[k]
    }
    previous = ""
    answers = start < 0 ? "{\"text\": [], \"answer_start\": []}" \
                        : sprintf("{\"text\": [\"%s\"], \"answer_start\": [%d]}", after, start)
    printf "{\"id\": \"c%d\", \"question\": \"which colour follows gold\", \"context\": \"%s\", \"answers\": %s}\n",
           direction * 8 + r, context, answers
  }
}' > colours.jsonl
examples=$PWD/colours.jsonl
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
common=(--task=question_answering --train_file="$examples" --eval_file="$examples" --version_2_with_negative
        --cache_dir=cache --max_seq_length=64 --doc_stride=16 --max_steps=6 --learning_rate=1e-3
        --adam_epsilon=1e-4 --logging_steps=1 --save_total_limit=0)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
field() { grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":([^,}]*).*/\1/p"; }
eval_figure() { sed -nE "s/.*\"$2\": ([-0-9.e+]+).*/\1/p" "$1/eval_results.json"; }
train() {  # OUTPUT_DIR LAUNCHER... -- FLAGS... (the output directory removed first unless KEEP_OUTPUT=1)
  local out=$1; shift
  local launcher=()
  while [ "$1" != "--" ]; do launcher+=("$1"); shift; done
  shift
  [ "${KEEP_OUTPUT:-0}" = 1 ] || rm -rf "$out"
  "${launcher[@]}" "$finetune" "${common[@]}" "$@" --output_dir="$out" > "$out.log" 2>&1 ||
    { cat "$out.log"; fail "$out: the run failed"; return 1; }
}
within() {  # A B RELATIVE_TOLERANCE: |A - B| <= tol * |A|
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= t * m) }'
}

# Checkpointing: bit-identical with dropout on.
train plain -- --per_device_train_batch_size=8 --save_strategy=no
train recomputed -- --per_device_train_batch_size=8 --save_strategy=no --gradient_checkpointing
cmp -s plain/model.safetensors recomputed/model.safetensors || fail "--gradient_checkpointing changed the weights"
echo "checkpointing: identical weights"

# Accumulation and mpirun against one batch of 8 (dropout 0: the runs draw no masks).
train one -- --per_device_train_batch_size=8 --dropout=0 --save_strategy=no
train accumulated -- --per_device_train_batch_size=4 --gradient_accumulation_steps=2 --dropout=0 --save_strategy=no
echo -n "accumulation: " && "$compare" one/model.safetensors accumulated/model.safetensors --tolerance=1e-6 ||
  fail "accumulation: weights differ by more than 1e-6"
train ranks mpirun --oversubscribe -np 2 -- --per_device_train_batch_size=4 --dropout=0 --save_strategy=no
echo -n "mpirun -np 2: " && "$compare" one/model.safetensors ranks/model.safetensors --tolerance=1e-6 ||
  fail "mpirun -np 2: weights differ by more than 1e-6"
for figure in eval_loss eval_f1 eval_total; do
  a=$(eval_figure one "$figure") b=$(eval_figure ranks "$figure")
  [ -n "$a" ] && [ -n "$b" ] && within "$a" "$b" 1e-6 || fail "mpirun -np 2: $figure $b, one process $a"
  echo "  $figure: one process $a, two ranks $b"
done

# Resume, fp16 with dropout on.
train whole -- --per_device_train_batch_size=4 --fp16 --save_steps=3
mkdir -p resumed && cp -r whole/checkpoint-3 resumed/
KEEP_OUTPUT=1 train resumed -- --per_device_train_batch_size=4 --fp16 --save_steps=3 --resume_from_checkpoint=latest
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/metrics_lines.sh"
strip_timing() { without_run_history "$1" | grep '"type":"train"'; }
[ "$(strip_timing resumed/metrics.jsonl | wc -l)" -eq 3 ] || fail "resume: not 3 resumed train lines"
if diff <(strip_timing whole/metrics.jsonl | tail -n 3) <(strip_timing resumed/metrics.jsonl) > /dev/null &&
   cmp -s whole/model.safetensors resumed/model.safetensors; then
  echo "resume: steps 4-6 and the final weights identical"
else
  fail "resume: the metrics of steps 4-6 or the final weights differ"
fi

# fp16 and bf16 against fp32 (plain), step by step.
for precision in fp16 bf16; do
  train "$precision" -- --per_device_train_batch_size=8 --save_strategy=no "--$precision"
  worst=$(paste <(field plain/metrics.jsonl loss) <(field "$precision"/metrics.jsonl loss) |
    awk '{ d = $1 - $2; if (d < 0) d = -d; r = d / $1; if (r > w) w = r } END { printf "%.3g", w }')
  [ "$(field "$precision"/metrics.jsonl loss | grep -cE '^[0-9.]+(e[-+]?[0-9]+)?$')" -eq 6 ] ||
    fail "$precision: not 6 finite losses"
  echo "$precision: losses within $worst relative of fp32's"
  within 1 "$(awk -v w="$worst" 'BEGIN { print 1 + w }')" 2e-2 || fail "$precision: loss differs by $worst"
  [ -n "$(eval_figure "$precision" eval_f1)" ] || fail "$precision: no eval_f1"
done

[ "$failures" -eq 0 ] && echo "question answering composes"
exit "$failures"
