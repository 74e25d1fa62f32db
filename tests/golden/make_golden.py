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
"""
import json
import os

import torch
from safetensors.torch import save_file
from transformers import (XLMRobertaConfig, XLMRobertaForMaskedLM,
                          XLMRobertaForSequenceClassification)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_xlmr")


def make_config():
    return XLMRobertaConfig(
        vocab_size=101, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
        intermediate_size=37, hidden_act="gelu", hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1, max_position_embeddings=20, type_vocab_size=1,
        initializer_range=0.4, layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, num_labels=3,
        id2label={0: "de", 1: "en", 2: "fr"}, label2id={"de": 0, "en": 1, "fr": 2},
        problem_type="single_label_classification")


def make_inputs():
    g = torch.Generator().manual_seed(1)
    batch, seq = 4, 9
    lengths = [9, 6, 3, 9]
    input_ids = torch.full((batch, seq), 1, dtype=torch.long)
    for b, n in enumerate(lengths):
        ids = torch.randint(4, 101, (n,), generator=g)
        ids[0], ids[n - 1] = 0, 2  # <s> ... </s>
        input_ids[b, :n] = ids
    attention_mask = (input_ids != 1).long()
    labels = torch.tensor([2, 0, 1, 1])
    return input_ids, attention_mask, labels


def main():
    torch.manual_seed(0)
    config = make_config()
    model = XLMRobertaForSequenceClassification(config).float()
    # Make LayerNorm and biases non-trivial so that the test sees wrong names or transposes.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(0.05 * torch.randn_like(p))
    model.save_pretrained(os.path.join(OUT, "classifier"), safe_serialization=True)

    input_ids, attention_mask, labels = make_inputs()
    model.eval()  # dropout off; gradients still flow
    out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    out.loss.backward()
    tensors = {
        "input_ids": input_ids, "attention_mask": attention_mask, "labels": labels,
        "logits": out.logits.detach().contiguous(), "loss": out.loss.detach().reshape(()),
    }
    for name, p in model.named_parameters():
        tensors["grad/" + name] = p.grad.detach().contiguous()
    save_file(tensors, os.path.join(OUT, "golden.safetensors"), metadata={"format": "pt"})

    mlm = XLMRobertaForMaskedLM(config)
    mlm.roberta.load_state_dict(model.roberta.state_dict(), strict=False)
    mlm.save_pretrained(os.path.join(OUT, "mlm"), safe_serialization=True)
    with open(os.path.join(OUT, "mlm", "config.json")) as f:
        mlm_config = json.load(f)
    assert mlm_config["architectures"] == ["XLMRobertaForMaskedLM"]
    print("loss", out.loss.item())
    print("logits", out.logits)


if __name__ == "__main__":
    main()
