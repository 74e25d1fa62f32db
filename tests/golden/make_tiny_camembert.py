#!/usr/bin/env python3
"""Generates tests/golden/tiny_camembert/: a tiny random CamemBERT and transformers' outputs on it.

Run once from the repository root, after tests/models/tokenizers/sentencepiece/testdata/make_camembert_testdata.py
(needs torch, transformers, sentencepiece from PyPI; a tool for making these files, not a
dependency of the product or of CI):

    python3 tests/golden/make_tiny_camembert.py

Writes under tests/golden/tiny_camembert/:
  model/             CamembertForSequenceClassification (hidden 16, 2 layers, 2 heads,
                     intermediate 32, max_position_embeddings 130, labels neg/pos), random
                     weights, saved with save_pretrained as safetensors; beside it the
                     CamemBERT tokenizer test's SentencePiece model
                     (tests/models/tokenizers/sentencepiece/testdata/camembert_unigram.model, 2000 pieces) copied
                     byte for byte as sentencepiece.bpe.model. vocab_size 2005, pad 1, bos 5,
                     eos 6: the ids transformers' CamembertTokenizer gives that model. Hidden 16
                     keeps the 2005-row embedding table (and the repository) small;
  input.tsv          texts and labels (header "text\tlabel"), what the test predicts;
  golden_logits.tsv  per input row, transformers' fp32 logits (dropout off) of the text as
                     CamembertTokenizer.from_pretrained(model/) tokenizes it with
                     truncation=True, max_length=128 (xlmr_predict's default), tab-separated;
  golden_loss.txt    the mean cross-entropy of those logits against the rows' labels.
"""
import os
import shutil

import torch
from transformers import CamembertConfig, CamembertForSequenceClassification, CamembertTokenizer

import make_tiny_roberta

HERE = os.path.dirname(os.path.abspath(__file__))
SPM_MODEL = os.path.join(HERE, "..", "models", "xlmr", "testdata", "camembert_unigram.model")
OUT = os.path.join(HERE, "tiny_camembert")
MODEL = os.path.join(OUT, "model")
LABELS = make_tiny_roberta.LABELS
MAX_LENGTH = make_tiny_roberta.MAX_LENGTH

# initializer_range 0.3 (HF: 0.02) spreads the logits, so that a token off shows well above
# the tolerance.
# French and other languages of the SentencePiece corpus, accents, CJK and emoji (unknown
# pieces), leading and doubled spaces, and a text longer than MAX_LENGTH tokens (truncation
# keeps its first 126 tokens).
TEXTS = [
    ("Bonjour le monde", "pos"),
    ("Impossible d'ouvrir le fichier « données.txt ».", "neg"),
    ("Café naïve résumé, über straße", "pos"),
    ("  espaces en tête et  doublés  ", "neg"),
    ("Привет, мир! 你好，世界 😀", "pos"),
    ("Nombre 12345 et symboles #$%&*", "neg"),
    (" ".join(["configuration"] * 80), "pos"),
]


def main():
    torch.manual_seed(37)
    os.makedirs(MODEL, exist_ok=True)
    shutil.copyfile(SPM_MODEL, os.path.join(MODEL, "sentencepiece.bpe.model"))
    tokenizer = CamembertTokenizer.from_pretrained(MODEL)
    assert (tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id) == (5, 6, 1)
    config = CamembertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=MAX_LENGTH + 2, type_vocab_size=1,
        initializer_range=0.3, layer_norm_eps=1e-5, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)},
        architectures=["CamembertForSequenceClassification"])
    make_tiny_roberta.save_with_golden(CamembertForSequenceClassification(config).eval(), tokenizer, TEXTS, OUT)

if __name__ == "__main__":
    main()
