#!/usr/bin/env bash
# How xlmr_finetune normalises the loss, checked against expectations that do not come from
# another run configuration of the trainer (tests that compare two of our own paths pass when
# both are wrong the same way; issue 44). Each part through the production binary:
#
# partial_batch   sequence classification, 27 rows at batch 8 (steps of 8, 8, 8, 3; dropout 0,
#                 lr 1e-3, --adam_epsilon=1e-4 as in data_parallel_test.sh, no clipping, which
#                 would hide a gradient's scale). The 3 rows of step 4 are found from
#                 batch_planner.h's stated order (tests/testing/trainer_oracle.py, written from
#                 that statement) and written to their own file. Oracles:
#                   - the eval path on exactly those 3 rows after step 3 (--eval_file of the 3
#                     rows, --eval_steps=3): step 4's logged loss equals that eval_loss within
#                     1e-6 relative (measured 1.3e-8: the eval pads, the training packs);
#                   - a run taking the 3 rows as its own FULL batch of 3 from the same state:
#                     checkpoint-3 (weights and AdamW moments) with its trainer_state.json
#                     rewritten to a global batch of 3 over 3 examples (epoch 3, step 0 of it;
#                     manifest.json removed, as a checkpoint without one still resumes),
#                     resumed with --per_device_train_batch_size=3 on the 3-row file. Where the
#                     batch is full, the examples and the nominal batch are the same number, so
#                     its step is right under either normaliser. Final weights within 1e-6
#                     (measured 7.5e-9; the nominal 8 moves them by far more).
# token           token classification from a model whose classifier weight and bias are zero
#                 (a saved run's model.safetensors with those tensors zeroed): every logit is 0,
#                 so each labelled token's cross-entropy is ln(L) and the classifier bias's
#                 gradient is (n/L - n_c)/N for label c, n the labelled tokens (words), n_c those
#                 tagged c, counted here from the CoNLL file, and N the trainer's normaliser; the
#                 encoder gets no gradient (it reaches the loss through the zero weight only). The
#                 7 sentences (12, 20, 13, 7, 13, 13, 8 words) are one step (global batch 8, a
#                 partial one), split over micro-batches (2 x 4, one process: packed, padded
#                 (--padding_free=false) and --fp16, whose loss scale must come off again) and over
#                 ranks (2 x 2 x mpirun -np 2, and with --zero_stage=1's reduce-scatter) holding
#                 different word counts (printed, checked to differ). AdamW's first step moves a parameter by lr * g / (|g| + eps) (bias
#                 correction makes m = g, v = g^2); with eps 0.1, comparable to |g|, the update
#                 shows g's scale. Oracles: step 1's loss equals ln(L) within 1e-6 relative
#                 (measured 1.9e-8, an f32 logsumexp); each bias equals -lr * g / (|g| + eps) with
#                 N = n within 1e-7 absolute (measured 6.4e-10; values ~2e-3; a normaliser off by
#                 the ranks' or micro-batches' share moves them by 1e-4 or more), 2e-6 under --fp16
#                 (measured 5.8e-7: the logits' gradient is rounded to fp16 on its way back).
# span            question answering (start and end positions, 2 terms a window), 15 colour
#                 examples of qa_composition_test.sh (one window each, all of one length: no
#                 padding), global batch 16 (a partial step of 15 windows: micro-batches of 4, 4,
#                 4, 3, ranks holding 8 and 7), learning rate 0 so that the final evaluation sees
#                 step 1's weights. Oracle: the eval path (the mean start and end cross-entropy
#                 over each window's own tokens, framework/train/qa_evaluate.h): step 1's logged
#                 loss equals eval_loss within 1e-6 relative, one process and mpirun -np 2.
# Args: xlmr_finetune, compare_models, trainer_oracle.py, langid train.tsv, langid_ner train.conll.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
compare=$(absolute "$2")
oracle=$(absolute "$3")
train_tsv=$(absolute "$4")
ner_conll=$(absolute "$5")
cd "$TEST_TMPDIR"
export LC_ALL=C
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
failures=0
fail() { echo "FAILED ($part): $*"; failures=$((failures + 1)); }
run() {  # LOG COMMAND...: the command, its log printed when it fails
  local log=$1; shift
  "$@" > "$log" 2>&1 || { cat "$log"; fail "$log: exit status $?"; return 1; }
}
line() { grep "\"type\":\"$2\",\"step\":$3," "$1"; }  # FILE TYPE STEP
number() { sed -nE "s/.*\"$1\":([-0-9.e+]+).*/\1/p"; }
within() {  # NAME A B RELATIVE_TOLERANCE
  local d
  d=$(awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; printf "%.3g", d / m }')
  echo "  $1: $2 vs $3 (relative difference $d, tolerance $4)"
  awk -v d="$d" -v t="$4" 'BEGIN { exit !(d <= t) }' || fail "$1: $2, expected $3"
}

part=partial_batch
echo "$part:"
# 27 texts of the embedded data, labelled pos/neg so that step 4's 3 rows hold both labels (a
# file of those 3 rows then has the same label map as the 27).
python3 "$oracle" order 27 42 0 > order.txt
sed -n '2,28p' "$train_tsv" | cut -f1 > texts.txt
awk 'NR == FNR { at[$1] = FNR - 1; next } { print $0 "\t" ((at[FNR - 1] % 2) ? "neg" : "pos") }' \
  order.txt texts.txt > rows.txt
{ printf 'text\tlabel\n'; cat rows.txt; } > train27.tsv
{ printf 'text\tlabel\n'; sed -n '25,27p' order.txt | while read -r i; do sed -n "$((i + 1))p" rows.txt; done; } > last3.tsv
[ "$(tail -n 3 last3.tsv | cut -f2 | sort -u | wc -l)" -eq 2 ] || fail "step 4's rows do not hold both labels"
common=(--dropout=0 --learning_rate=1e-3 --adam_epsilon=1e-4 --max_grad_norm=0 --logging_steps=1
        --cache_dir=cache --max_steps=4 --save_total_limit=0)
run run27.log "$finetune" "${common[@]}" --train_file=train27.tsv --eval_file=last3.tsv \
  --eval_strategy=steps --eval_steps=3 --save_steps=3 --output_dir=run27
[ "$(grep '"type":"train"' run27/metrics.jsonl | number examples | tr '\n' ' ')" = "8 16 24 27 " ] ||
  fail "the steps did not hold 8, 8, 8 and 3 examples"
within "step 4 loss vs eval_loss of its 3 rows after step 3" \
  "$(line run27/metrics.jsonl train 4 | number loss)" "$(line run27/metrics.jsonl eval 3 | number eval_loss)" 1e-6
mkdir -p own3 && cp -r run27/checkpoint-3 own3/checkpoint && rm own3/checkpoint/manifest.json
python3 - own3/checkpoint/trainer_state.json <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))
assert (state["global_step"], state["global_batch_size"], state["train_examples"]) == (3, 8, 27), state
state.update(global_batch_size=3, train_examples=3, epoch=3, step_in_epoch=0)
json.dump(state, open(sys.argv[1], "w"), indent=2)
PY
run own3.log "$finetune" "${common[@]}" --train_file=last3.tsv --per_device_train_batch_size=3 \
  --resume_from_checkpoint=own3/checkpoint --output_dir=own3/out
[ "$(grep -c '"type":"train"' own3/out/metrics.jsonl)" -eq 1 ] || fail "the 3-row run did not take exactly one step"
echo -n "  weights after step 4 vs the 3 rows as a batch of their own: "
"$compare" run27/model.safetensors own3/out/model.safetensors --tolerance=1e-6 || fail "weights after step 4 differ"

part=token
echo "$part:"
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 7' "$ner_conll" > ner7.conll
# Labelled tokens (words) per tag, in run_ner's sorted order, and the words of each sentence.
awk 'BEGIN { RS = ""; FS = "\n" } { for (i = 1; i <= NF; ++i) { split($i, f, "\t"); print f[2] } }' ner7.conll |
  sort | uniq -c | awk '{ print $2, $1 }' > tag_counts.txt
awk 'BEGIN { RS = ""; FS = "\n" } { print NF }' ner7.conll > words.txt
# Where the sentences fall (batch_planner.h: micro-step m of rank r takes the global batch's
# chunk m * W + r of P): words per micro-batch, one process (P 2, A 4) and two ranks (P 2, A 2).
python3 "$oracle" order 7 42 0 > order7.txt
for layout in "1 4" "2 2"; do
  set -- $layout
  shares=$(awk -v w="$1" 'NR == FNR { words[FNR - 1] = $1; next }
                 { chunk = int((FNR - 1) / 2); share[chunk % w, int(chunk / w)] += words[$1] }
                 END { for (r = 0; r < w; ++r) { s = ""; for (m = 0; m < 4; ++m) if ((r, m) in share) s = s " " share[r, m]; print "rank " r ":" s } }' \
             words.txt order7.txt)
  echo "  $1 rank(s), words per micro-batch: $(echo "$shares" | tr '\n' ';')"
  [ "$(echo "$shares" | tr ' ;' '\n\n' | grep -E '^[0-9]+$' | sort -u | wc -l)" -gt 1 ] || fail "equal word counts"
done
run base.log "$finetune" --task=token_classification --train_file=ner7.conll --max_steps=1 --learning_rate=0 \
  --cache_dir=cache --save_strategy=no --output_dir=base
mkdir -p zero_head && cp base/config.json base/sentencepiece.bpe.model zero_head/
python3 "$oracle" zero base/model.safetensors zero_head/model.safetensors classifier.weight classifier.bias
token=(--task=token_classification --model_dir=zero_head --train_file=ner7.conll --eval_file=ner7.conll
       --max_steps=1 --learning_rate=1e-2 --lr_scheduler_type=constant --adam_epsilon=0.1 --max_grad_norm=0
       --dropout=0 --logging_steps=1 --cache_dir=cache --save_strategy=no --per_device_train_batch_size=2)
run token_one.log "$finetune" "${token[@]}" --gradient_accumulation_steps=4 --output_dir=token_one
run token_padded.log "$finetune" "${token[@]}" --gradient_accumulation_steps=4 --padding_free=false --output_dir=token_padded
run token_fp16.log "$finetune" "${token[@]}" --gradient_accumulation_steps=4 --fp16 --output_dir=token_fp16
run token_two.log mpirun --oversubscribe -np 2 "$finetune" "${token[@]}" --gradient_accumulation_steps=2 --output_dir=token_two
run token_zero.log mpirun --oversubscribe -np 2 "$finetune" "${token[@]}" --gradient_accumulation_steps=2 --zero_stage=1 \
  --output_dir=token_zero
labels=$(wc -l < tag_counts.txt)
for out in token_one token_padded token_fp16 token_two token_zero; do
  tolerance=1e-7; [ $out = token_fp16 ] && tolerance=2e-6
  within "$out: step 1 loss vs ln($labels)" "$(line $out/metrics.jsonl train 1 | number loss)" \
    "$(awk -v l="$labels" 'BEGIN { printf "%.17g", log(l) }')" 1e-6
  python3 "$oracle" read $out/model.safetensors classifier.bias > $out.bias
  worst=$(awk -v lr=1e-2 -v eps=0.1 'NR == FNR { count[FNR] = $2; n += $2; labels = FNR; next }
            { g = (n / labels - count[FNR]) / n; a = g < 0 ? -g : g; d = $1 + lr * g / (a + eps)
              if (d < 0) d = -d; if (d > w) w = d; rows = FNR }
            END { if (rows != labels) print "rows"; else printf "%.3g", w }' tag_counts.txt $out.bias)
  echo "  $out: classifier.bias vs -lr g / (|g| + eps), g from the counted words: max difference $worst (tolerance $tolerance)"
  awk -v w="$worst" -v t="$tolerance" 'BEGIN { exit !(w != "rows" && w <= t) }' || fail "$out: classifier.bias differs by $worst"
done

part=span
echo "$part:"
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
    if (direction * 8 + r < 15)
      printf "{\"id\": \"c%d\", \"question\": \"which colour follows gold\", \"context\": \"%s\", \"answers\": %s}\n",
             direction * 8 + r, context, answers
  }
}' > colours15.jsonl
span=(--task=question_answering --train_file=colours15.jsonl --eval_file=colours15.jsonl --version_2_with_negative
      --max_seq_length=64 --doc_stride=16 --max_steps=1 --learning_rate=0 --dropout=0 --logging_steps=1
      --cache_dir=cache --save_strategy=no --per_device_train_batch_size=4)
run span_one.log "$finetune" "${span[@]}" --gradient_accumulation_steps=4 --output_dir=span_one
run span_two.log mpirun --oversubscribe -np 2 "$finetune" "${span[@]}" --gradient_accumulation_steps=2 --output_dir=span_two
for out in span_one span_two; do
  [ "$(line $out/metrics.jsonl train 1 | number examples)" = 15 ] || fail "$out: step 1 did not hold the 15 windows"
  within "$out: step 1 loss vs eval_loss at the same weights" "$(line $out/metrics.jsonl train 1 | number loss)" \
    "$(sed -nE 's/.*"eval_loss": ([-0-9.e+]+).*/\1/p' $out/eval_results.json)" 1e-6
done

[ "$failures" -eq 0 ] && echo "every normalisation matches its oracle"
exit "$failures"
