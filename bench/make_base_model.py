#!/usr/bin/env python3
"""Writes a base-shaped classifier with random weights, saved by Hugging Face transformers, for
the CPU benchmarks (bench/attention_bench.sh, bench/family_bench.sh): 12 layers, hidden 768, 12
heads, intermediate 3072, the embedded data set's labels. --family picks the model family and
its hub base model's vocabulary and positions, with a tokenizer of that family from the repo:

  xlm-roberta  vocabulary 250002, 514 positions; recipes/data/langid/sentencepiece.bpe.model
  bert         vocabulary 30522 (bert-base-uncased), 512 positions, 2 token types;
               tests/models/tokenizers/wordpiece/testdata/uncased (vocab.txt, tokenizer_config.json)
  roberta      vocabulary 50265 (roberta-base), 514 positions;
               tests/models/tokenizers/byte_level_bpe/testdata/bpe (vocab.json, merges.txt, tokenizer_config.json)
  camembert    vocabulary 32005 (camembert-base), 514 positions, bos 5, eos 6;
               tests/models/tokenizers/sentencepiece/testdata/camembert_unigram.model as sentencepiece.bpe.model

The tokenizers' ids are below each vocabulary, so only the embedding rows they use are read, as
with any tokenizer. A tool for benchmarks, not a product dependency.

    python3 bench/make_base_model.py OUT_DIR [--family=xlm-roberta]
"""
import argparse
import csv
import os
import shutil

import torch
from transformers import (BertConfig, BertForSequenceClassification, CamembertConfig,
                          CamembertForSequenceClassification, RobertaConfig,
                          RobertaForSequenceClassification, XLMRobertaConfig,
                          XLMRobertaForSequenceClassification)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "recipes", "data", "langid")
TOKENIZER_TESTDATA = os.path.join(REPO, "tests", "models", "tokenizers")
ROBERTA_IDS = dict(max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1)
# family: (config class, model class, config values, tokenizer files (source, name in OUT_DIR))
FAMILIES = {
    "xlm-roberta": (XLMRobertaConfig, XLMRobertaForSequenceClassification,
                    dict(vocab_size=250002, bos_token_id=0, eos_token_id=2, **ROBERTA_IDS),
                    [(os.path.join(DATA, "sentencepiece.bpe.model"), "sentencepiece.bpe.model")]),
    "bert": (BertConfig, BertForSequenceClassification,
             dict(vocab_size=30522, max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12,
                  pad_token_id=0),
             [(os.path.join(TOKENIZER_TESTDATA, "wordpiece", "testdata", "uncased", name), name)
              for name in ("vocab.txt", "tokenizer_config.json")]),
    "roberta": (RobertaConfig, RobertaForSequenceClassification,
                dict(vocab_size=50265, bos_token_id=0, eos_token_id=2, **ROBERTA_IDS),
                [(os.path.join(TOKENIZER_TESTDATA, "byte_level_bpe", "testdata", "bpe", name), name)
                 for name in ("vocab.json", "merges.txt", "tokenizer_config.json")]),
    "camembert": (CamembertConfig, CamembertForSequenceClassification,
                  dict(vocab_size=32005, bos_token_id=5, eos_token_id=6, **ROBERTA_IDS),
                  [(os.path.join(TOKENIZER_TESTDATA, "sentencepiece", "testdata", "camembert_unigram.model"),
                    "sentencepiece.bpe.model")]),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="xlm-roberta")
    args = parser.parse_args()
    config_class, model_class, values, tokenizer_files = FAMILIES[args.family]
    with open(os.path.join(DATA, "train.tsv"), newline="") as f:
        labels = sorted({row["label"] for row in csv.DictReader(f, delimiter="\t")})
    config = config_class(
        hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)}, **values)
    torch.manual_seed(0)
    model_class(config).save_pretrained(args.out_dir)
    for source, name in tokenizer_files:
        shutil.copy(source, os.path.join(args.out_dir, name))


if __name__ == "__main__":
    main()
