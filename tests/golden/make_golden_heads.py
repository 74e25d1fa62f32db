#!/usr/bin/env python3
"""Generates the Hugging Face golden data for the token-classification and regression heads.

Run once from the repository root, after make_golden.py (needs torch, transformers, safetensors
from PyPI; tools for making these files, not dependencies of the product or of CI):

    python3 tests/golden/make_golden_heads.py

It reuses make_golden.py's tiny configuration and inputs and the backbone weights of its
classifier, and writes under tests/golden/tiny_xlmr/:
  token_classifier/   XLMRobertaForTokenClassification (labels B-X, I-X, O) saved with
                      save_pretrained, and golden_token.safetensors: per-token labels [4, 9]
                      (-100 on <s>, </s>, padding and two later sub-tokens, as run_ner aligns
                      them), logits [4, 9, 3], the loss (mean over the labelled tokens) and
                      every parameter's gradient, fp32, dropout off;
  regressor/          XLMRobertaForSequenceClassification with num_labels 1 and problem_type
                      "regression", and golden_regression.safetensors: float targets [4], the
                      predictions [4, 1], the MSE loss and every gradient.
"""
import os

import torch
from safetensors.torch import save_file
from transformers import (XLMRobertaForSequenceClassification,
                          XLMRobertaForTokenClassification)

import make_golden

OUT = make_golden.OUT


def perturb_head(model):
    """Non-trivial head biases, so a wrong name or transpose shows in the logits."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("classifier") and name.endswith("bias"):
                p.add_(0.05 * torch.randn_like(p))


def token_labels(input_ids, attention_mask):
    labels = torch.randint(0, 3, input_ids.shape, generator=torch.Generator().manual_seed(2))
    labels[attention_mask == 0] = -100
    labels[input_ids == 0] = -100  # <s>
    labels[input_ids == 2] = -100  # </s>
    labels[0, 3] = -100            # later sub-tokens of a word
    labels[3, 5] = -100
    return labels


def run_and_save(model, inputs, labels, directory, golden_name):
    model.save_pretrained(os.path.join(OUT, directory), safe_serialization=True)
    model.eval()  # dropout off; gradients still flow
    out = model(**inputs, labels=labels)
    out.loss.backward()
    tensors = {"labels": labels, "logits": out.logits.detach().contiguous(),
               "loss": out.loss.detach().reshape(())}
    for name, p in model.named_parameters():
        tensors["grad/" + name] = p.grad.detach().contiguous()
    save_file(tensors, os.path.join(OUT, golden_name), metadata={"format": "pt"})
    print(golden_name, "loss", out.loss.item())


def main():
    torch.manual_seed(3)
    backbone = XLMRobertaForSequenceClassification.from_pretrained(
        os.path.join(OUT, "classifier")).roberta.state_dict()
    input_ids, attention_mask, _ = make_golden.make_inputs()
    inputs = {"input_ids": input_ids, "attention_mask": attention_mask}

    config = make_golden.make_config()
    config.id2label = {0: "B-X", 1: "I-X", 2: "O"}
    config.label2id = {"B-X": 0, "I-X": 1, "O": 2}
    config.problem_type = None
    tagger = XLMRobertaForTokenClassification(config).float()
    tagger.roberta.load_state_dict(backbone)
    perturb_head(tagger)
    run_and_save(tagger, inputs, token_labels(input_ids, attention_mask), "token_classifier",
                 "golden_token.safetensors")

    config = make_golden.make_config()
    config.num_labels = 1
    config.id2label = {0: "LABEL_0"}
    config.label2id = {"LABEL_0": 0}
    config.problem_type = "regression"
    regressor = XLMRobertaForSequenceClassification(config).float()
    regressor.roberta.load_state_dict(backbone, strict=False)
    perturb_head(regressor)
    targets = torch.tensor([0.5, -1.25, 2.0, 0.75])
    run_and_save(regressor, inputs, targets, "regressor", "golden_regression.safetensors")


if __name__ == "__main__":
    main()
