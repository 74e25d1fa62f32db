#!/usr/bin/env python3
"""Generates tests/golden/tiny_camembert/: a tiny random CamemBERT and transformers' outputs on it.

Run once from the repository root, after tests/models/xlmr/testdata/make_camembert_testdata.py
(needs torch, transformers, sentencepiece from PyPI; a tool for making these files, not a
dependency of the product or of CI):

    python3 tests/golden/make_tiny_camembert.py

Writes under tests/golden/tiny_camembert/:
  model/             CamembertForSequenceClassification (hidden 16, 2 layers, 2 heads,
                     intermediate 32, max_position_embeddings 130, labels neg/pos), random
                     weights, saved with save_pretrained as safetensors; beside it the
                     CamemBERT tokenizer test's SentencePiece model
                     (tests/models/xlmr/testdata/camembert_unigram.model, 2000 pieces) copied
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

HERE = os.path.dirname(os.path.abspath(__file__))
SPM_MODEL = os.path.join(HERE, "..", "models", "xlmr", "testdata", "camembert_unigram.model")
OUT = os.path.join(HERE, "tiny_camembert")
MODEL = os.path.join(OUT, "model")
LABELS = ["neg", "pos"]
MAX_LENGTH = 128

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
    model = CamembertForSequenceClassification(config).eval()
    with torch.no_grad():  # non-trivial head biases, so a wrong name or transpose shows
        for name, p in model.named_parameters():
            if name.startswith("classifier") and name.endswith("bias"):
                p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(MODEL, safe_serialization=True)

    texts = [t for t, _ in TEXTS]
    labels = torch.tensor([LABELS.index(l) for _, l in TEXTS])
    batch = tokenizer(texts, truncation=True, max_length=MAX_LENGTH, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, labels=labels)
    with open(os.path.join(OUT, "input.tsv"), "w", encoding="utf-8") as f:
        f.write("text\tlabel\n")
        for text, label in TEXTS:
            f.write(f"{text}\t{label}\n")
    with open(os.path.join(OUT, "golden_logits.tsv"), "w") as f:
        for row in out.logits.tolist():
            f.write("\t".join(f"{v:.9g}" for v in row) + "\n")
    with open(os.path.join(OUT, "golden_loss.txt"), "w") as f:
        f.write(f"{out.loss.item():.9g}\n")
    print("lengths", batch["attention_mask"].sum(1).tolist(), "loss", out.loss.item())
    print("first ids", batch["input_ids"][0][:8].tolist())


if __name__ == "__main__":
    main()
