#!/usr/bin/env bash
# BERT (config.json model_type "bert") end to end through both binaries, on the tiny random
# BERT of tests/golden/make_tiny_bert.py (one directory per task head, saved by transformers):
#   (a) xlmr_predict's logits on text pairs equal transformers' (BertTokenizerFast from the same
#       directory, token types included, dropout off);
#   (b) fine-tuning on pairs writes vocab.txt and tokenizer_config.json beside the weights (and
#       into checkpoints, listed in the manifest), config.json with model_type bert and
#       BertForSequenceClassification, and resumes from a checkpoint;
#   (c) xlmr_predict with the fine-tuned directory;
#   (d) a missing vocab.txt: one line naming it, exit status 2, nothing written;
#   (e) token classification from the sequence classifier's directory (its pooler is not
#       used), sequence classification from the token classifier's (no pooler in the file: a
#       fresh one), and question answering, whose predictions equal the training run's final
#       evaluation's.
# Args: xlmr_finetune, xlmr_predict, tiny_bert/input.tsv, tiny_bert/golden_logits.tsv,
#   langid's train.tsv, langid_ner's train.conll, the QA examples.
set -uo pipefail
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/model_family_checks.sh"
finetune=$(absolute "$1")
predict=$(absolute "$2")
golden=$(dirname "$(absolute "$3")")
golden_input=$(absolute "$3")
golden_logits=$(absolute "$4")
langid_train=$(absolute "$5")
ner_train=$(absolute "$6")
qa_examples=$(absolute "$7")
cd "$TEST_TMPDIR"
cp -rL "$golden/sequence_classification" tiny  # writable copies, without the runfiles' links
cp -rL "$golden/token_classification" tiny_tagger
# The tiny model has 40 positions (BERT's positions start at 0: max_seq_length 40).
length=--max_seq_length=40

# (a) The golden logits. Tolerance 1e-5 (absolute, logits of magnitude < 1): both sides are
# fp32 with dropout off and differ only in the order of the sums (measured ~1e-7 by
# //tests/models:bert_parity_test). The rows' logits differ from each other by 1e-2: a
# token off, a token type off (the pairs' second texts are type 1) or the pooler's tanh
# missing moves them far beyond 1e-5.
"$predict" --model_dir=tiny --input_file="$golden_input" --text_pair_column=text_pair $length \
  --output_file=golden_pred.jsonl 2> predict.log || { cat predict.log; fail "xlmr_predict on the tiny BERT"; }
expect_golden_logits golden_pred.jsonl "$golden_logits"

# (b) Fine-tuning on pairs: each langid row with the next row's text as its second text; the
# tiny model's labels are neg/neutral/pos, so its head is new (initialised from --seed).
awk -F'\t' 'NR == 1 { print "text\ttext_pair\tlabel"; next }
            NR > 1 && NR <= 66 { if (prev != "") print prev "\t" $1 "\t" label; prev = $1; label = $2 }' \
  "$langid_train" > train.tsv
[ "$(wc -l < train.tsv)" -eq 65 ] || fail "train.tsv: expected 64 rows"
"$finetune" --model_dir=tiny --train_file=train.tsv --eval_file=train.tsv --text_pair_column=text_pair $length \
  --output_dir=out --cache_dir=cache --max_steps=4 --per_device_train_batch_size=16 --learning_rate=1e-3 \
  --save_steps=2 > finetune.log 2>&1 || { cat finetune.log; fail "xlmr_finetune --model_dir=tiny"; }
for file in config.json model.safetensors vocab.txt tokenizer_config.json; do
  [ -f "out/$file" ] || fail "out/$file missing"
  grep -q "\"name\": *\"$file\"" out/manifest.json || fail "out/manifest.json does not list $file"
done
for file in vocab.txt tokenizer_config.json; do
  cmp -s "tiny/$file" "out/$file" || fail "out/$file is not a copy of the model's"
  cmp -s "tiny/$file" "out/checkpoint-4/$file" || fail "out/checkpoint-4/$file is not a copy of the model's"
done
[[ "$(compact out/config.json)" == *'"model_type":"bert"'* ]] || fail "out/config.json: model_type is not bert"
[[ "$(compact out/config.json)" == *'"architectures":["BertForSequenceClassification"]'* ]] ||
  fail "out/config.json: architectures is not [\"BertForSequenceClassification\"]"
"$finetune" --model_dir=tiny --train_file=train.tsv --eval_file=train.tsv --text_pair_column=text_pair $length \
  --output_dir=out --cache_dir=cache --max_steps=6 --per_device_train_batch_size=16 --learning_rate=1e-3 \
  --save_steps=2 --resume_from_checkpoint=out/checkpoint-4 > resume.log 2>&1 || {
  cat resume.log; fail "resume from checkpoint-4"; }
[ -f out/checkpoint-6/vocab.txt ] || fail "the resumed run's checkpoint-6 has no vocab.txt"

# (c) Prediction with the fine-tuned directory.
"$predict" --model_dir=out --input_file=train.tsv --text_pair_column=text_pair $length --output_file=pred.jsonl \
  2> predict_out.log || { cat predict_out.log; fail "xlmr_predict --model_dir=out"; }
[ "$(wc -l < pred.jsonl)" -eq 64 ] || fail "expected 64 predictions, got $(wc -l < pred.jsonl)"

# (d) A directory without vocab.txt: one line naming it, exit status 2, nothing written.
rm -rf no_vocab && cp -r tiny no_vocab && rm no_vocab/vocab.txt
expect_error "no_vocab/vocab.txt: missing" \
  "$finetune" --model_dir=no_vocab --train_file=train.tsv --output_dir=bad_out --cache_dir=cache $length
expect_error "no_vocab/vocab.txt: missing" \
  "$predict" --model_dir=no_vocab --input_file=train.tsv --output_file=bad_pred.jsonl $length

# (e) The other heads.
awk -v RS= -v ORS='\n\n' 'NR <= 16' "$ner_train" > train.conll
"$finetune" --model_dir=tiny --task=token_classification --train_file=train.conll --output_dir=ner --cache_dir=cache \
  $length --max_steps=2 --per_device_train_batch_size=8 > ner.log 2>&1 || { cat ner.log; fail "token classification"; }
[[ "$(compact ner/config.json)" == *'"architectures":["BertForTokenClassification"]'* ]] ||
  fail "ner/config.json: architectures is not [\"BertForTokenClassification\"]"
"$predict" --model_dir=ner --input_file=train.conll --output_file=ner_pred.jsonl $length 2> ner_predict.log || {
  cat ner_predict.log; fail "xlmr_predict token classification"; }
[ "$(wc -l < ner_pred.jsonl)" -eq 16 ] || fail "expected 16 token-classification lines"

"$finetune" --model_dir=tiny_tagger --task=sequence_classification --train_file=train.tsv --text_pair_column=text_pair \
  $length --output_dir=from_tagger --cache_dir=cache --max_steps=2 --per_device_train_batch_size=8 > from_tagger.log 2>&1 ||
  { cat from_tagger.log; fail "sequence classification from a directory without a pooler"; }

"$finetune" --model_dir=tiny --task=question_answering --train_file="$qa_examples" --eval_file="$qa_examples" \
  --version_2_with_negative $length --doc_stride=8 --max_steps=2 --per_device_train_batch_size=8 \
  --output_dir=qa --cache_dir=cache > qa.log 2>&1 || { cat qa.log; fail "question answering"; }
[[ "$(compact qa/config.json)" == *'"architectures":["BertForQuestionAnswering"]'* ]] ||
  fail "qa/config.json: architectures is not [\"BertForQuestionAnswering\"]"
"$predict" --model_dir=qa --input_file="$qa_examples" --version_2_with_negative $length --doc_stride=8 \
  --output_dir=qa_pred 2> qa_predict.log || { cat qa_predict.log; fail "xlmr_predict question answering"; }
cmp -s qa/eval_predictions.json qa_pred/predictions.json ||
  fail "xlmr_predict's answers differ from the training run's final evaluation"
echo PASSED
