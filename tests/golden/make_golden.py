#!/usr/bin/env python3
"""Generates the Hugging Face golden data for the XLM-R parity tests.

Run once from the repository root (needs torch, transformers, safetensors from PyPI; they are
tools for making these files, not dependencies of the product or of CI):

    python3 tests/golden/make_golden.py

It writes, under tests/golden/tiny_xlmr/:
  classifier/      config.json + model.safetensors of a randomly initialised
                   XLMRobertaForSequenceClassification (3 labels), saved with save_pretrained;
  golden.safetensors  inputs (input_ids, attention_mask, labels) and what HF computes for them in
                   fp32 with dropout off (model.eval()): logits, loss and the gradient of the loss
                   w.r.t. every parameter, named "grad/<HF parameter name>";
  mlm/             a backbone checkpoint as the hub ships it (XLMRobertaForMaskedLM, same
                   backbone weights): lm_head.* present, no classifier; the loader must ignore
                   lm_head and give a fresh head.
The shapes are deliberately awkward (intermediate 37, 3 heads of 8) and two rows are padded.

    python3 tests/golden/make_golden.py --shape=head64

writes the same classifier/ and golden.safetensors (no mlm/) under tests/golden/xlmr_head64/
for a model whose heads are 64 wide (hidden 128, 2 heads, intermediate 64, 2 layers), the head
size of XLM-R base and large and of the CUDA fused attention kernels, on 3 rows of 70 tokens
(lengths 70, 40, 5): two key tiles of 64, a row whose second tile is all padding. With it the
fused kernels run inside a whole model on every backend and precision. Its weights are drawn
with std 0.15, not 0.4: scores grow with hidden * std^2, and at 0.4 the softmax rows of hidden
128 are nearly one-hot, where one half-precision rounding changes a row (HF's own eager and sdpa
results then differ by 0.4 in the loss).
"""
import argparse
import json
import os

import torch
from safetensors.torch import save_file
from transformers import (XLMRobertaConfig, XLMRobertaForMaskedLM,
                          XLMRobertaForSequenceClassification)

HERE = os.path.dirname(os.path.abspath(__file__))

# Per --shape: the output directory, the model's sizes and the inputs' rows.
SHAPES = {
    "tiny": dict(directory="tiny_xlmr", hidden_size=24, num_attention_heads=3,
                 intermediate_size=37, max_position_embeddings=20, seq=9, lengths=[9, 6, 3, 9],
                 labels=[2, 0, 1, 1], initializer_range=0.4, mlm=True),
    "head64": dict(directory="xlmr_head64", hidden_size=128, num_attention_heads=2,
                   intermediate_size=64, max_position_embeddings=80, seq=70,
                   lengths=[70, 40, 5], labels=[2, 0, 1], initializer_range=0.15, mlm=False),
}


def make_config(shape):
    return XLMRobertaConfig(
        vocab_size=101, hidden_size=shape["hidden_size"], num_hidden_layers=2,
        num_attention_heads=shape["num_attention_heads"],
        intermediate_size=shape["intermediate_size"], hidden_act="gelu", hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=shape["max_position_embeddings"], type_vocab_size=1,
        initializer_range=shape["initializer_range"], layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, num_labels=3,
        id2label={0: "de", 1: "en", 2: "fr"}, label2id={"de": 0, "en": 1, "fr": 2},
        problem_type="single_label_classification")


def make_inputs(shape):
    g = torch.Generator().manual_seed(1)
    lengths = shape["lengths"]
    batch, seq = len(lengths), shape["seq"]
    input_ids = torch.full((batch, seq), 1, dtype=torch.long)
    for b, n in enumerate(lengths):
        ids = torch.randint(4, 101, (n,), generator=g)
        ids[0], ids[n - 1] = 0, 2  # <s> ... </s>
        input_ids[b, :n] = ids
    attention_mask = (input_ids != 1).long()
    labels = torch.tensor(shape["labels"])
    return input_ids, attention_mask, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    shape = SHAPES[parser.parse_args().shape]
    out_dir = os.path.join(HERE, shape["directory"])
    torch.manual_seed(0)
    config = make_config(shape)
    model = XLMRobertaForSequenceClassification(config).float()
    # Make LayerNorm and biases non-trivial so that the test sees wrong names or transposes.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(os.path.join(out_dir, "classifier"), safe_serialization=True)

    input_ids, attention_mask, labels = make_inputs(shape)
    model.eval()  # dropout off; gradients still flow
    out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    out.loss.backward()
    tensors = {
        "input_ids": input_ids, "attention_mask": attention_mask, "labels": labels,
        "logits": out.logits.detach().contiguous(), "loss": out.loss.detach().reshape(()),
    }
    for name, p in model.named_parameters():
        tensors["grad/" + name] = p.grad.detach().contiguous()
    save_file(tensors, os.path.join(out_dir, "golden.safetensors"), metadata={"format": "pt"})

    if shape["mlm"]:
        mlm = XLMRobertaForMaskedLM(config)
        mlm.roberta.load_state_dict(model.roberta.state_dict(), strict=False)
        mlm.save_pretrained(os.path.join(out_dir, "mlm"), safe_serialization=True)
        with open(os.path.join(out_dir, "mlm", "config.json")) as f:
            mlm_config = json.load(f)
        assert mlm_config["architectures"] == ["XLMRobertaForMaskedLM"]
    print("loss", out.loss.item())
    print("logits", out.logits)


if __name__ == "__main__":
    main()
