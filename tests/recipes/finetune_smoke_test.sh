#!/usr/bin/env bash
# The embedded default end to end, shortened: trains, evaluates and writes the output
# directory of the contract (model, checkpoint, metrics, eval results).
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$TEST_TMPDIR/out"
"$finetune" --max_steps=12 --logging_steps=4 --per_device_eval_batch_size=64 \
  --output_dir="$out" --cache_dir="$TEST_TMPDIR/cache" > "$TEST_TMPDIR/log" 2>&1 || {
  cat "$TEST_TMPDIR/log"; exit 1; }
for f in config.json model.safetensors sentencepiece.bpe.model metrics.jsonl eval_results.json \
         checkpoint-12/model.safetensors checkpoint-12/optimizer.safetensors checkpoint-12/trainer_state.json; do
  [ -s "$out/$f" ] || { echo "missing $out/$f"; exit 1; }
done
# One train line per optimizer step, then the final eval and the summary.
[ "$(grep -c '"type":"train"' "$out/metrics.jsonl")" -eq 12 ] || { echo "expected 12 train lines"; exit 1; }
grep -q '"type":"eval"' "$out/metrics.jsonl" || { echo "no eval line"; exit 1; }
# Without --fp16 the loss scaler is off: every step reports scale 1 (docs/CONTRACT.md).
[ "$(grep -c '"loss_scale":1.0,' "$out/metrics.jsonl")" -eq 12 ] || {
  echo "expected loss_scale 1 on every step without --fp16"; grep -m1 '"type":"train"' "$out/metrics.jsonl"; exit 1; }
tail -n 1 "$out/metrics.jsonl" | grep -q '"type":"summary","steps":12' || { echo "bad summary"; exit 1; }
for key in eval_accuracy eval_macro_f1 test_accuracy; do
  grep -q "\"$key\"" "$out/eval_results.json" || { echo "eval_results.json lacks $key"; exit 1; }
done
grep -q '"XLMRobertaForSequenceClassification"' "$out/config.json" || { echo "config.json architectures"; exit 1; }
# The tokenized data went to --cache_dir (that a later run reuses it, and rebuilds a stale or
# corrupt entry, is tests/framework/data:token_cache_test's subject).
[ -n "$(find "$TEST_TMPDIR/cache" -type f)" ] || { echo "nothing cached in --cache_dir"; exit 1; }
echo "smoke test passed"
