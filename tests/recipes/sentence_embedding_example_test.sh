#!/usr/bin/env bash
# --task=sentence_embedding with no data flags trains the embedded example
# (recipes/data/langid_bitext: the same message in two languages as (anchor, positive) rows),
# shortened to 3 steps: its preset is applied and named on stderr, the dev split is scored with
# the retrieval figures and the test split reported under test_, the saved directory is a
# sentence-transformers model, and xlmr_predict embeds the test split's anchors into a .npy of
# one row per line of the file.
# Args: xlmr_finetune, xlmr_predict, langid_bitext/test.jsonl.
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
test_file=$(absolute "$3")
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }
"$finetune" --task=sentence_embedding --max_steps=3 --cache_dir=cache --output_dir=out > run.txt 2>&1 ||
  fail "the embedded run: $(cat run.txt)"
grep -q "from recipes/data/langid_bitext/training_args.json" run.txt || fail "no preset line: $(cat run.txt)"
for name in eval_loss eval_cosine_accuracy@1 eval_cosine_ndcg@10 eval_cosine_map@100 test_loss test_cosine_mrr@10; do
  grep -q "\"$name\"" out/eval_results.json || fail "eval_results.json has no $name: $(cat out/eval_results.json)"
done
grep -q '"XLMRobertaModel"' out/config.json || fail "config.json does not name XLMRobertaModel"
for file in modules.json 1_Pooling/config.json sentencepiece.bpe.model; do
  grep -q "\"name\":\"$file\"" out/manifest.json || fail "$file is not in manifest.json"
done
"$predict" --model_dir=out --input_file="$test_file" --text_column=anchor --output_file=anchors.npy > predict.txt 2>&1 ||
  fail "xlmr_predict: $(cat predict.txt)"
rows=$(wc -l < "$test_file")
head -c 128 anchors.npy | grep -aq "'shape': ($rows, 128)" || fail "anchors.npy is not [$rows, 128]: $(head -c 128 anchors.npy)"
[ "$(stat -c %s anchors.npy)" -eq $((128 + rows * 128 * 4)) ] || fail "anchors.npy has $(stat -c %s anchors.npy) bytes"
echo "the embedded sentence-embedding example trains, evaluates, saves and predicts"
