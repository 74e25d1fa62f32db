#!/usr/bin/env bash
# RoBERTa (config.json model_type "roberta") end to end through both binaries, on the tiny
# random RobertaForSequenceClassification of tests/golden/make_tiny_roberta.py:
#   (a) xlmr_predict's logits equal transformers' (RobertaTokenizerFast from the same directory,
#       then the model in fp32) within 1e-5;
#   (b) xlmr_finetune --model_dir=it trains a few steps (other labels: a new head); the output
#       directory carries vocab.json, merges.txt, tokenizer_config.json (in the manifest) and a
#       config.json with model_type roberta and RobertaForSequenceClassification;
#   (c) xlmr_predict reads that output;
#   (d) an unsupported model_type and a missing merges.txt: one line naming it, exit status 2;
#   (e) token classification and question answering (the tokenizer's offsets) a few steps each,
#       with their Roberta* class in config.json, and --resume_from_checkpoint.
# Args: xlmr_finetune, xlmr_predict, tiny_roberta/model/config.json, tiny_roberta/input.tsv,
#   tiny_roberta/golden_logits.tsv, tiny_roberta/golden_loss.txt, langid's train.tsv,
#   langid_ner's train.conll, the QA examples.
set -uo pipefail
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/model_family_checks.sh"
finetune=$(absolute "$1")
predict=$(absolute "$2")
golden_model=$(dirname "$(absolute "$3")")
golden_input=$(absolute "$4")
golden_logits=$(absolute "$5")
golden_loss=$(absolute "$6")
langid_train=$(absolute "$7")
ner_train=$(absolute "$8")
qa_examples=$(absolute "$9")
cd "$TEST_TMPDIR"
cp -rL "$golden_model" tiny  # a writable copy, without the runfiles' links

# (a) The golden logits. Tolerance 1e-5 (absolute, logits of magnitude <= 2): both sides are
# fp32 with dropout off; they differ only in the order of the sums (our matmuls and layer
# norms against PyTorch's), a few ulps per operation over 2 layers (measured ~2e-6). A token
# off, or the wrong tokenizer, moves the logits by 1e-2 or more (the texts are spread out by
# the generator's initializer_range 0.3).
"$predict" --model_dir=tiny --input_file="$golden_input" --output_file=golden_pred.jsonl 2> predict.log || {
  cat predict.log; fail "xlmr_predict on the tiny RoBERTa"; }
expect_golden_logits golden_pred.jsonl "$golden_logits"
expect_golden_loss golden_pred.jsonl "$golden_input" "$golden_loss"

# (b) Fine-tuning: 4 labels of langid, 64 rows; the tiny model's labels are neg/pos, so its head
# is new (initialised from --seed).
awk -F'\t' 'NR == 1 || $2 == "de" || $2 == "fr" || $2 == "ru" || $2 == "zh"' "$langid_train" | head -n 65 > train.tsv
"$finetune" --model_dir=tiny --train_file=train.tsv --eval_file=train.tsv --output_dir=out --cache_dir=cache \
  --max_steps=4 --per_device_train_batch_size=16 --learning_rate=1e-3 --save_steps=2 > finetune.log 2>&1 || {
  cat finetune.log; fail "xlmr_finetune --model_dir=tiny"; }
for file in config.json model.safetensors vocab.json merges.txt tokenizer_config.json; do
  [ -f "out/$file" ] || fail "out/$file missing"
  grep -q "\"name\": *\"$file\"" out/manifest.json || fail "out/manifest.json does not list $file"
done
[ ! -e out/sentencepiece.bpe.model ] || fail "out/ has XLM-R's sentencepiece.bpe.model"
for file in vocab.json merges.txt tokenizer_config.json; do
  cmp -s "tiny/$file" "out/$file" || fail "out/$file is not a copy of the model's"
  cmp -s "tiny/$file" "out/checkpoint-4/$file" || fail "out/checkpoint-4/$file is not a copy of the model's"
done
[[ "$(compact out/config.json)" == *'"model_type":"roberta"'* ]] || fail "out/config.json: model_type is not roberta"
[[ "$(compact out/config.json)" == *'"architectures":["RobertaForSequenceClassification"]'* ]] ||
  fail "out/config.json: architectures is not [\"RobertaForSequenceClassification\"]"

# --resume_from_checkpoint reads the checkpoint's tokenizer and finishes the run.
"$finetune" --model_dir=tiny --train_file=train.tsv --eval_file=train.tsv --output_dir=out --cache_dir=cache \
  --max_steps=6 --per_device_train_batch_size=16 --learning_rate=1e-3 --save_steps=2 \
  --resume_from_checkpoint=out/checkpoint-4 > resume.log 2>&1 || { cat resume.log; fail "resume from checkpoint-4"; }
[ -f out/checkpoint-6/merges.txt ] || fail "the resumed run's checkpoint-6 has no merges.txt"

# (c) Prediction with the fine-tuned directory.
"$predict" --model_dir=out --input_file=train.tsv --output_file=pred.jsonl 2> predict_out.log || {
  cat predict_out.log; fail "xlmr_predict --model_dir=out"; }
[ "$(wc -l < pred.jsonl)" -eq 64 ] || fail "expected 64 predictions, got $(wc -l < pred.jsonl)"

# (d) Bad model directories: one line naming the problem, exit status 2, nothing written.
for type in electra deberta-v2; do
  rm -rf "$type" && cp -r tiny "$type"
  sed -i "s/\"model_type\": \"roberta\"/\"model_type\": \"$type\"/" "$type/config.json"
  expect_error "model_type is \"$type\", expected one of \"xlm-roberta\", \"roberta\", \"bert\", \"camembert\"" \
    "$finetune" --model_dir="$type" --train_file=train.tsv --output_dir=bad_out --cache_dir=cache
  expect_error "model_type is \"$type\", expected one of \"xlm-roberta\", \"roberta\", \"bert\", \"camembert\"" \
    "$predict" --model_dir="$type" --input_file=train.tsv --output_file=bad_pred.jsonl
done
for file in merges.txt vocab.json; do
  rm -rf no_file && cp -r tiny no_file && rm "no_file/$file"
  expect_error "no_file/$file: missing" \
    "$finetune" --model_dir=no_file --train_file=train.tsv --output_dir=bad_out --cache_dir=cache
  expect_error "no_file/$file: missing" \
    "$predict" --model_dir=no_file --input_file=train.tsv --output_file=bad_pred.jsonl
done

# (e) Token classification and question answering from the same directory.
awk -v RS= -v ORS='\n\n' 'NR <= 16' "$ner_train" > train.conll
"$finetune" --model_dir=tiny --task=token_classification --train_file=train.conll --output_dir=ner --cache_dir=cache \
  --max_steps=2 --per_device_train_batch_size=8 > ner.log 2>&1 || { cat ner.log; fail "token classification"; }
[[ "$(compact ner/config.json)" == *'"architectures":["RobertaForTokenClassification"]'* ]] ||
  fail "ner/config.json: architectures is not [\"RobertaForTokenClassification\"]"
"$predict" --model_dir=ner --input_file=train.conll --output_file=ner_pred.jsonl 2> ner_predict.log || {
  cat ner_predict.log; fail "xlmr_predict token classification"; }
[ "$(wc -l < ner_pred.jsonl)" -eq 16 ] || fail "expected 16 token-classification lines"

"$finetune" --model_dir=tiny --task=question_answering --train_file="$qa_examples" --eval_file="$qa_examples" \
  --version_2_with_negative --max_seq_length=64 --doc_stride=16 --max_steps=2 --per_device_train_batch_size=8 \
  --output_dir=qa --cache_dir=cache > qa.log 2>&1 || { cat qa.log; fail "question answering"; }
[[ "$(compact qa/config.json)" == *'"architectures":["RobertaForQuestionAnswering"]'* ]] ||
  fail "qa/config.json: architectures is not [\"RobertaForQuestionAnswering\"]"
"$predict" --model_dir=qa --input_file="$qa_examples" --version_2_with_negative --max_seq_length=64 --doc_stride=16 \
  --output_dir=qa_pred 2> qa_predict.log || { cat qa_predict.log; fail "xlmr_predict question answering"; }
cmp -s qa/eval_predictions.json qa_pred/predictions.json ||
  fail "xlmr_predict's answers differ from the training run's final evaluation"
echo PASSED
