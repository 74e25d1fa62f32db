#!/usr/bin/env bash
# CamemBERT (config.json model_type "camembert") end to end through both binaries, on the tiny
# random CamembertForSequenceClassification of tests/golden/make_tiny_camembert.py:
#   (a) xlmr_predict's logits equal transformers' (CamembertTokenizer from the same directory,
#       then the model in fp32) within 1e-5, and so does the loss;
#   (b) xlmr_finetune --model_dir=it trains a few steps (other labels: a new head); the output
#       directory and its checkpoint carry sentencepiece.bpe.model (in the manifest) and a
#       config.json with model_type camembert, CamembertForSequenceClassification and
#       CamemBERT's special ids (pad 1, bos 5, eos 6);
#       the same file read as xlm-roberta gets its own token cache;
#   (c) xlmr_predict reads that output;
#   (d) a missing sentencepiece.bpe.model and a config.json whose pad_token_id is not the
#       tokenizer's <pad>: one line naming it, exit status 2;
#   (e) token classification and question answering a few steps each, with their Camembert*
#       class in config.json.
# Args: xlmr_finetune, xlmr_predict, tiny_camembert/model/config.json, tiny_camembert/input.tsv,
#   tiny_camembert/golden_logits.tsv, tiny_camembert/golden_loss.txt, langid's train.tsv,
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
# norms against PyTorch's), a few ulps per operation over 2 layers (measured ~1e-6, see the
# log line below). A token off, XLM-R's id mapping (every id 3 lower, <s> 0 for 5) or the wrong
# tokenizer moves the logits by 1e-2 or more (initializer_range 0.3 spreads them).
"$predict" --model_dir=tiny --input_file="$golden_input" --output_file=golden_pred.jsonl 2> predict.log || {
  cat predict.log; fail "xlmr_predict on the tiny CamemBERT"; }
expect_golden_logits golden_pred.jsonl "$golden_logits"
expect_golden_loss golden_pred.jsonl "$golden_input" "$golden_loss"

# (b) Fine-tuning: 4 labels of langid, 64 rows; the tiny model's labels are neg/pos, so its head
# is new (initialised from --seed).
awk -F'\t' 'NR == 1 || $2 == "de" || $2 == "fr" || $2 == "ru" || $2 == "zh"' "$langid_train" | head -n 65 > train.tsv
"$finetune" --model_dir=tiny --train_file=train.tsv --eval_file=train.tsv --output_dir=out --cache_dir=cache \
  --max_steps=4 --per_device_train_batch_size=16 --learning_rate=1e-3 --save_steps=2 > finetune.log 2>&1 || {
  cat finetune.log; fail "xlmr_finetune --model_dir=tiny"; }
for file in config.json model.safetensors sentencepiece.bpe.model; do
  [ -f "out/$file" ] || fail "out/$file missing"
  grep -q "\"name\": *\"$file\"" out/manifest.json || fail "out/manifest.json does not list $file"
done
for dir in out out/checkpoint-4; do
  cmp -s tiny/sentencepiece.bpe.model "$dir/sentencepiece.bpe.model" ||
    fail "$dir/sentencepiece.bpe.model is not a copy of the model's"
  [[ "$(compact $dir/config.json)" == *'"model_type":"camembert"'* ]] || fail "$dir/config.json: model_type is not camembert"
  [[ "$(compact $dir/config.json)" == *'"architectures":["CamembertForSequenceClassification"]'* ]] ||
    fail "$dir/config.json: architectures is not [\"CamembertForSequenceClassification\"]"
  for id in '"pad_token_id":1' '"bos_token_id":5' '"eos_token_id":6' '"vocab_size":2005'; do
    [[ "$(compact $dir/config.json)" == *"$id"* ]] || fail "$dir/config.json: no $id"
  done
done

# The token cache: the same sentencepiece.bpe.model read as an xlm-roberta directory gives other
# ids, so it must get its own cache file, never the CamemBERT run's (nor give it its ids).
rm -rf as_xlmr && cp -r tiny as_xlmr
sed -i 's/"model_type": "camembert"/"model_type": "xlm-roberta"/; s/"CamembertFor/"XLMRobertaFor/' as_xlmr/config.json
"$finetune" --model_dir=as_xlmr --train_file=train.tsv --output_dir=xlmr_out --cache_dir=cache \
  --max_steps=1 --per_device_train_batch_size=16 > xlmr.log 2>&1 || { cat xlmr.log; fail "xlmr_finetune --model_dir=as_xlmr"; }
[ "$(ls cache/train.tsv.*.tokens | wc -l)" -eq 2 ] ||
  fail "xlm-roberta and camembert runs on the same sentencepiece.bpe.model share a token cache: $(ls cache)"

# (c) Prediction with the fine-tuned directory.
"$predict" --model_dir=out --input_file=train.tsv --output_file=pred.jsonl 2> predict_out.log || {
  cat predict_out.log; fail "xlmr_predict --model_dir=out"; }
[ "$(wc -l < pred.jsonl)" -eq 64 ] || fail "expected 64 predictions, got $(wc -l < pred.jsonl)"

# (d) Bad model directories: one line naming the problem, exit status 2, nothing written.
rm -rf no_file && cp -r tiny no_file && rm no_file/sentencepiece.bpe.model
expect_error "no_file/sentencepiece.bpe.model: missing; a camembert model directory needs" \
  "$finetune" --model_dir=no_file --train_file=train.tsv --output_dir=bad_out --cache_dir=cache
expect_error "no_file/sentencepiece.bpe.model: missing; a camembert model directory needs" \
  "$predict" --model_dir=no_file --input_file=train.tsv --output_file=bad_pred.jsonl
# XLM-R's pad id 0 is not CamemBERT's <pad> (1).
rm -rf pad0 && cp -r tiny pad0
sed -i 's/"pad_token_id": 1,/"pad_token_id": 0,/' pad0/config.json
expect_error "pad0/config.json: pad_token_id is 0, the tokenizer's <pad> is 1" \
  "$predict" --model_dir=pad0 --input_file=train.tsv --output_file=bad_pred.jsonl

# (e) Token classification and question answering from the same directory.
awk -v RS= -v ORS='\n\n' 'NR <= 16' "$ner_train" > train.conll
"$finetune" --model_dir=tiny --task=token_classification --train_file=train.conll --output_dir=ner --cache_dir=cache \
  --max_steps=2 --per_device_train_batch_size=8 > ner.log 2>&1 || { cat ner.log; fail "token classification"; }
[[ "$(compact ner/config.json)" == *'"architectures":["CamembertForTokenClassification"]'* ]] ||
  fail "ner/config.json: architectures is not [\"CamembertForTokenClassification\"]"
"$predict" --model_dir=ner --input_file=train.conll --output_file=ner_pred.jsonl 2> ner_predict.log || {
  cat ner_predict.log; fail "xlmr_predict token classification"; }
[ "$(wc -l < ner_pred.jsonl)" -eq 16 ] || fail "expected 16 token-classification lines"

"$finetune" --model_dir=tiny --task=question_answering --train_file="$qa_examples" --eval_file="$qa_examples" \
  --version_2_with_negative --max_seq_length=64 --doc_stride=16 --max_steps=2 --per_device_train_batch_size=8 \
  --output_dir=qa --cache_dir=cache > qa.log 2>&1 || { cat qa.log; fail "question answering"; }
[[ "$(compact qa/config.json)" == *'"architectures":["CamembertForQuestionAnswering"]'* ]] ||
  fail "qa/config.json: architectures is not [\"CamembertForQuestionAnswering\"]"
"$predict" --model_dir=qa --input_file="$qa_examples" --version_2_with_negative --max_seq_length=64 --doc_stride=16 \
  --output_dir=qa_pred 2> qa_predict.log || { cat qa_predict.log; fail "xlmr_predict question answering"; }
cmp -s qa/eval_predictions.json qa_pred/predictions.json ||
  fail "xlmr_predict's answers differ from the training run's final evaluation"
# Keep the fine-tuned directories for a look (e.g. loading them in transformers by hand).
if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]; then
  cp -r out ner qa "$TEST_UNDECLARED_OUTPUTS_DIR/" 2>/dev/null || true
fi
echo PASSED
