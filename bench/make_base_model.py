#!/usr/bin/env python3
"""Writes an XLM-R base-shaped classifier with random weights, saved by Hugging Face
transformers, for the CPU benchmarks (bench/attention_bench.sh): 12 layers, hidden 768, 12 heads,
intermediate 3072, vocabulary 250002, max_position_embeddings 514, the embedded data set's labels,
and the embedded tokenizer (recipes/data/langid/sentencepiece.bpe.model; its ids are < 8002, so
only the embedding rows it uses are read, as with any tokenizer). A tool for benchmarks, not a
product dependency.

    python3 bench/make_base_model.py OUT_DIR
"""
import csv
import os
import shutil
import sys

import torch
from transformers import XLMRobertaConfig, XLMRobertaForSequenceClassification

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "recipes", "data", "langid")


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_base_model.py OUT_DIR")
    out = sys.argv[1]
    with open(os.path.join(DATA, "train.tsv"), newline="") as f:
        labels = sorted({row["label"] for row in csv.DictReader(f, delimiter="\t")})
    config = XLMRobertaConfig(
        vocab_size=250002, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, max_position_embeddings=514, type_vocab_size=1,
        layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)})
    torch.manual_seed(0)
    XLMRobertaForSequenceClassification(config).save_pretrained(out)
    shutil.copy(os.path.join(DATA, "sentencepiece.bpe.model"), out)


if __name__ == "__main__":
    main()
