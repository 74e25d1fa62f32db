#!/usr/bin/env bash
# The cached loss's memory (issue 43): the activation peak of one training step of
# --task=sentence_embedding at 1024 (anchor, positive) rows with --mini_batch_size=64 (64 texts of
# one column per pass, as sentence-transformers' CachedMultipleNegativesRankingLoss cuts them),
# against the uncached step at the mini-batch size (64 rows: 128 texts in one pass) and at 1024
# rows, as metrics.jsonl's peak_activation_bytes reports them (the CPU's tensor accounting).
# The model: a random MiniLM-L12-shaped XLM-R (hidden 384, 12 layers, 6 heads, intermediate
# 1536) on langid's tokenizer, made with transformers (a tool here, not a product dependency);
# the rows: texts of recipes/data/langid/train.tsv paired with others, --max_seq_length 64.
#
#   bench/cached_loss_memory.sh [WORK_DIR]     # prints a markdown table
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
bazel build -c opt //recipes:xlmr_finetune > /dev/null 2>&1
finetune=bazel-bin/recipes/xlmr_finetune
python3 - "$work" <<'PY'
import csv, json, os, shutil, sys
import torch
from transformers import XLMRobertaConfig, XLMRobertaModel
work = sys.argv[1]
model_dir = os.path.join(work, "model")
if not os.path.exists(os.path.join(model_dir, "model.safetensors")):
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=8002, hidden_size=384, num_hidden_layers=12, num_attention_heads=6,
                              intermediate_size=1536, max_position_embeddings=130, type_vocab_size=1,
                              layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    XLMRobertaModel(config).save_pretrained(model_dir)
    shutil.copyfile("recipes/data/langid/sentencepiece.bpe.model", os.path.join(model_dir, "sentencepiece.bpe.model"))
with open("recipes/data/langid/train.tsv", encoding="utf-8") as f:
    texts = [row[0] for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)][1:]
with open(os.path.join(work, "pairs.jsonl"), "w", encoding="utf-8") as f:
    for i in range(1024):
        f.write(json.dumps({"anchor": texts[i], "positive": texts[i + 1024]}, ensure_ascii=False) + "\n")
PY
# run NAME FLAGS...: one step; prints its peak_activation_bytes and the plan's line for it.
run() {
  local name=$1; shift
  rm -rf "$work/$name"
  "$finetune" --task=sentence_embedding --model_dir="$work/model" --train_file="$work/pairs.jsonl" \
    --max_seq_length=64 --max_steps=1 --save_strategy=no --logging_steps=1 --cache_dir="$work/cache" \
    --output_dir="$work/$name" "$@" > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
  sed -nE 's/.*"type":"train".*"peak_activation_bytes":([0-9]+).*/\1/p' "$work/$name/metrics.jsonl"
}
uncached_small=$(run uncached_64 --per_device_train_batch_size=64)
uncached_large=$(run uncached_1024 --per_device_train_batch_size=1024)
cached_large=$(run cached_1024 --per_device_train_batch_size=1024 --mini_batch_size=64)
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
echo "| step (MiniLM-L12 shape, max_seq_length 64) | texts per pass | peak activation MiB |"
echo "|---|---|---|"
echo "| uncached, 64 rows | 128 | $(mib "$uncached_small") |"
echo "| uncached, 1024 rows | 2048 | $(mib "$uncached_large") |"
echo "| cached (--mini_batch_size=64), 1024 rows | 64 | $(mib "$cached_large") |"
