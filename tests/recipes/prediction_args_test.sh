#!/usr/bin/env bash
# prediction_args.json (recipes/prediction_args.h): a model directory remembers the settings its
# predictions depend on, and xlmr_predict (and xlmr_finetune --model_dir) use them by default.
# Expectations come from the training run itself, not from the predictor:
#  1. question answering, the embedded example (recipes/data/langid_qa: version 2, windows of 96
#     tokens, stride 48, evaluation batches of 64): xlmr_predict with no flag but the input and
#     the output directory writes run_qa's files byte-equal to the training run's predict_ files
#     of the same test file;
#  2. token classification with --max_seq_length=16 (words cut off): xlmr_predict's lines are
#     byte-equal to the training run's predict_predictions.jsonl of the same test file, and the
#     word accuracy this test computes from them against the gold tags of test.conll equals the
#     training run's eval_accuracy, exactly (the same counts give the same double);
#  3. sequence classification with --max_seq_length=8: byte-equal likewise, and the mean
#     -log p(gold) and the accuracy from xlmr_predict's probabilities equal eval_loss (1e-12
#     relative: the same model and batches; only the mean's summation order differs) and
#     eval_accuracy;
#  4. xlmr_finetune --model_dir=<the token-classification model> at learning rate 0 evaluates
#     with the recorded max_seq_length: the same eval_accuracy;
#  5. a given flag wins, with one stdout line naming it and the recorded value; a directory
#     without the file keeps the flags' defaults (question answering's 384);
#  6. a recorded value the flag would refuse: exit status 2, one line naming the file.
# Args: xlmr_finetune, xlmr_predict, recipes/data/langid/test.tsv (its folder's parent holds the
# langid_ner and langid_qa splits too).
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
data=$(dirname "$(dirname "$(absolute "$3")")")
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }

# 1. The embedded question-answering example, shortened to 30 steps.
"$finetune" --task=question_answering --max_steps=30 --output_dir=qa --cache_dir=cache > qa.log 2>&1 ||
  { cat qa.log; fail "the embedded question-answering run"; }
grep -q '"name":"prediction_args.json"' qa/manifest.json || fail "qa/manifest.json does not list prediction_args.json"
grep -q '"max_seq_length": 96' qa/prediction_args.json || fail "recorded: $(cat qa/prediction_args.json)"
"$predict" --model_dir=qa --input_file="$data/langid_qa/test.jsonl" --output_dir=answers > out.txt 2> err.txt ||
  { cat err.txt; fail "xlmr_predict on the embedded QA model"; }
[ ! -s out.txt ] || fail "xlmr_predict printed a difference although no flag was given: $(cat out.txt)"
for name in predictions.json nbest_predictions.json null_odds.json; do
  cmp -s "answers/$name" "qa/predict_$name" || fail "answers/$name differs from the training run's predict_$name"
done
echo "question answering: 3 files byte-equal to the training run's"

# 5. A given flag wins (and says so, once, on stdout); a directory without the file keeps the
# defaults (the hub's models, older runs).
"$predict" --model_dir=qa --input_file="$data/langid_qa/test.jsonl" --output_dir=answers_v1 \
  --version_2_with_negative=false > out.txt 2> err.txt || { cat err.txt; fail "xlmr_predict --version_2_with_negative=false"; }
[ "$(wc -l < out.txt)" -eq 1 ] && grep -qF -- "--version_2_with_negative=false (trained with true)" out.txt ||
  fail "no one line naming the differing flag: $(cat out.txt)"
[ ! -e answers_v1/null_odds.json ] || fail "the given --version_2_with_negative=false did not win"
cp -r qa older && rm older/prediction_args.json
"$predict" --model_dir=older --input_file="$data/langid_qa/test.jsonl" --output_dir=answers_old > out.txt 2> err.txt
[ $? -eq 2 ] && grep -qF "got 384" err.txt || fail "without prediction_args.json the QA default 384 does not apply: $(cat err.txt)"

# 2. Token classification with words cut off at 16 tokens, evaluated on the test split.
"$finetune" --task=token_classification --max_steps=20 --max_seq_length=16 --eval_file="$data/langid_ner/test.conll" \
  --output_dir=ner --cache_dir=cache > ner.log 2>&1 || { cat ner.log; fail "the token-classification run"; }
"$predict" --model_dir=ner --input_file="$data/langid_ner/test.conll" --output_file=ner.jsonl 2> err.txt ||
  { cat err.txt; fail "xlmr_predict on the token-classification model"; }
word_accuracy() {  # predictions (JSON lines), gold CoNLL -> "accuracy cut_words"
  python3 - "$1" "$2" <<'EOF'
import json, sys
predictions = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
sentences, words = [], []
for line in open(sys.argv[2], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line:
        if words: sentences.append(words)
        words = []
    else:
        words.append(line.split("\t"))
if words: sentences.append(words)
assert len(sentences) == len(predictions), (len(sentences), len(predictions))
correct = total = cut = 0
for gold, predicted in zip(sentences, predictions):
    assert [w for w, _ in gold] == predicted["words"]
    for (_, tag), label in zip(gold, predicted["labels"]):
        if label is None: cut += 1; continue
        total += 1; correct += label == tag
print(repr(correct / total), cut)
EOF
}
cmp -s ner.jsonl ner/predict_predictions.jsonl || fail "ner.jsonl differs from the training run's predict_predictions.jsonl"
read -r accuracy cut <<< "$(word_accuracy ner.jsonl "$data/langid_ner/test.conll")"
trained=$(python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["eval_accuracy"]))' ner/eval_results.json)
echo "token classification: word accuracy $accuracy from xlmr_predict ($cut words cut off), eval_accuracy $trained"
[ "$cut" -gt 0 ] || fail "no word was cut off at 16 tokens: the test cannot tell 16 from the default 128"
[ "$accuracy" = "$trained" ] || fail "xlmr_predict's word accuracy $accuracy is not the training run's eval_accuracy $trained"

# 4. xlmr_finetune --model_dir evaluates the same way (learning rate 0 keeps the weights).
"$finetune" --model_dir=ner --task=token_classification --max_steps=1 --learning_rate=0 \
  --eval_file="$data/langid_ner/test.conll" --output_dir=ner_again --cache_dir=cache > again.log 2>&1 ||
  { cat again.log; fail "xlmr_finetune --model_dir=ner"; }
again=$(python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["eval_accuracy"]))' ner_again/eval_results.json)
[ "$again" = "$trained" ] || fail "xlmr_finetune --model_dir=ner evaluates to $again, the model's own run to $trained"
grep -q '"max_seq_length": 16' ner_again/prediction_args.json || fail "ner_again records $(cat ner_again/prediction_args.json)"

# 3. Sequence classification (the embedded langid data) at 8 tokens.
"$finetune" --max_steps=20 --max_seq_length=8 --eval_file="$data/langid/test.tsv" --output_dir=cls --cache_dir=cache \
  > cls.log 2>&1 || { cat cls.log; fail "the sequence-classification run"; }
"$predict" --model_dir=cls --input_file="$data/langid/test.tsv" --output_file=cls.jsonl 2> err.txt ||
  { cat err.txt; fail "xlmr_predict on the sequence-classification model"; }
cmp -s cls.jsonl cls/predict_predictions.jsonl || fail "cls.jsonl differs from the training run's predict_predictions.jsonl"
python3 - cls.jsonl "$data/langid/test.tsv" cls/config.json cls/eval_results.json <<'EOF' || fail "sequence classification"
import csv, json, math, sys
predictions = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
rows = list(csv.DictReader(open(sys.argv[2], encoding="utf-8", newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
label2id = json.load(open(sys.argv[3]))["label2id"]
results = json.load(open(sys.argv[4]))
assert len(rows) == len(predictions), (len(rows), len(predictions))
loss = sum(-math.log(p["probabilities"][label2id[r["label"]]]) for r, p in zip(rows, predictions)) / len(rows)
accuracy = sum(p["label"] == r["label"] for r, p in zip(rows, predictions)) / len(rows)
print(f"sequence classification: loss {loss!r} accuracy {accuracy!r} from xlmr_predict; "
      f"eval_loss {results['eval_loss']!r} eval_accuracy {results['eval_accuracy']!r}")
sys.exit(abs(loss - results["eval_loss"]) > 1e-12 * results["eval_loss"] or accuracy != results["eval_accuracy"])
EOF
# The recorded 8 matters: at the default 128 the same model gives other probabilities.
"$predict" --model_dir=cls --input_file="$data/langid/test.tsv" --output_file=cls128.jsonl --max_seq_length=128 \
  > out.txt 2> err.txt || { cat err.txt; fail "xlmr_predict --max_seq_length=128"; }
grep -qF -- "--max_seq_length=128 (trained with 8)" out.txt || fail "no line for --max_seq_length=128: $(cat out.txt)"
! cmp -s cls.jsonl cls128.jsonl || fail "8 and 128 tokens give the same predictions: the test cannot tell them apart"

# 6. A recorded value the flag would refuse.
cp -r cls bad && sed -i 's/"max_seq_length": 8/"max_seq_length": 2/' bad/prediction_args.json && rm bad/manifest.json
rm -f bad.jsonl
"$predict" --model_dir=bad --input_file="$data/langid/test.tsv" --output_file=bad.jsonl > out.txt 2> err.txt
status=$?
[ "$status" -eq 2 ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -qF 'bad/prediction_args.json: "max_seq_length": expected an integer in [3, ' err.txt &&
  [ ! -e bad.jsonl ] || fail "a bad recorded max_seq_length: status $status, stderr $(cat err.txt)"
echo "prediction args test passed"
