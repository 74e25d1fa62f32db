#!/usr/bin/env python3
"""Generates tests/golden/tiny_roberta/: a tiny random RoBERTa and transformers' outputs on it.

Run once from the repository root (needs torch, transformers, safetensors from PyPI; a tool for
making these files, not a dependency of the product or of CI):

    python3 tests/golden/make_tiny_roberta.py

Writes under tests/golden/tiny_roberta/:
  model/             RobertaForSequenceClassification (hidden 32, 2 layers, 2 heads,
                     intermediate 64, max_position_embeddings 130, labels neg/pos), random
                     weights, saved with save_pretrained as safetensors; beside it the byte-level
                     BPE test vocabulary of tests/models/tokenizers/byte_level_bpe/testdata/bpe/ (vocab.json,
                     merges.txt, tokenizer_config.json), copied byte for byte;
  input.tsv          texts and labels (header "text\tlabel"), what the test predicts;
  golden_logits.tsv  per input row, transformers' fp32 logits (dropout off) of the text as
                     RobertaTokenizerFast.from_pretrained(model/) tokenizes it with
                     truncation=True, max_length=128 (xlmr_predict's default), tab-separated;
  golden_loss.txt    the mean cross-entropy of those logits against the rows' labels.
"""
import os
import shutil

import torch
from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
BPE = os.path.join(HERE, "..", "models", "roberta", "testdata", "bpe")
OUT = os.path.join(HERE, "tiny_roberta")
MODEL = os.path.join(OUT, "model")
LABELS = ["neg", "pos"]
MAX_LENGTH = 128

# initializer_range 0.3 (HF: 0.02) spreads the logits, so that a token off shows well above
# the tolerance.
# Plain ASCII, accents and other scripts (byte-level pieces), leading and doubled spaces, and a
# text longer than MAX_LENGTH tokens (truncation keeps its first 126 tokens).
TEXTS = [
    ("Hello world", "pos"),
    ("The quick brown fox jumps over the lazy dog.", "neg"),
    ("Café naïve résumé, über straße", "pos"),
    ("  leading spaces and  doubled  spaces", "neg"),
    ("Привет, мир! 你好，世界 😀", "pos"),
    ("numbers 12345 and symbols #$%&*", "neg"),
    (" ".join(["tokenization"] * 80), "pos"),
]


def main():
    torch.manual_seed(31)
    os.makedirs(MODEL, exist_ok=True)
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(BPE, name), os.path.join(MODEL, name))
    tokenizer = RobertaTokenizerFast.from_pretrained(MODEL)
    config = RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=MAX_LENGTH + 2, type_vocab_size=1, initializer_range=0.3,
        layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)},
        architectures=["RobertaForSequenceClassification"])
    save_with_golden(RobertaForSequenceClassification(config).eval(), tokenizer, TEXTS, OUT)


def save_with_golden(model, tokenizer, texts, out):
    """Perturbs `model`'s head biases, saves it in out/model and writes out/input.tsv (`texts`:
    (text, label) pairs), out/golden_logits.tsv and out/golden_loss.txt as the docstring says
    (also make_tiny_camembert.py's)."""
    with torch.no_grad():  # non-trivial head biases, so a wrong name or transpose shows
        for name, p in model.named_parameters():
            if name.startswith("classifier") and name.endswith("bias"):
                p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(os.path.join(out, "model"), safe_serialization=True)

    labels = torch.tensor([LABELS.index(l) for _, l in texts])
    batch = tokenizer([t for t, _ in texts], truncation=True, max_length=MAX_LENGTH, padding=True,
                      return_tensors="pt")
    with torch.no_grad():
        result = model(**batch, labels=labels)
    with open(os.path.join(out, "input.tsv"), "w", encoding="utf-8") as f:
        f.write("text\tlabel\n")
        for text, label in texts:
            f.write(f"{text}\t{label}\n")
    with open(os.path.join(out, "golden_logits.tsv"), "w") as f:
        for row in result.logits.tolist():
            f.write("\t".join(f"{v:.9g}" for v in row) + "\n")
    with open(os.path.join(out, "golden_loss.txt"), "w") as f:
        f.write(f"{result.loss.item():.9g}\n")
    print("lengths", batch["attention_mask"].sum(1).tolist(), "loss", result.loss.item(),
          "first ids", batch["input_ids"][0][:8].tolist())


if __name__ == "__main__":
    main()
