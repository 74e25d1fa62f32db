#!/usr/bin/env python3
"""Writes label_smoothing_golden.json: the loss and the logits' gradient that transformers'
LabelSmoother (transformers.trainer_pt_utils, the Trainer's --label_smoothing_factor) gives on
fixed fp32 logits, which tests/framework/train/objective_test.cc compares with
xlmr::train::ObjectiveLoss / ObjectiveBackward.

Run from the repository root (torch and transformers pip-installed; not needed by the tests):
    python3 tests/framework/train/testdata/make_label_smoothing_golden.py

Each case is called as the Trainer calls the smoother: LabelSmoother(epsilon)(logits, labels,
num_items_in_batch=N), N being the labelled rows (examples, or tokens whose label is not -100)
of the whole global batch. A case with `micro_batches` splits its rows into micro-batches, each
smoothed with the global N, as under gradient accumulation: the loss of each micro-batch and
the gradient of their sum are recorded. Values are fp32 tensors written as Python floats.
"""
import json
import os
import re

import torch
import transformers
from transformers.trainer_pt_utils import LabelSmoother


def random_logits(shape, seed):
    generator = torch.Generator().manual_seed(seed)
    return (3.0 * torch.randn(shape, generator=generator)).float()


def smoothed(logits, labels, epsilon, micro_batches):
    """Loss per micro-batch and the gradient of their sum w.r.t. the logits."""
    leaf = logits.clone().requires_grad_(True)
    num_items = int((labels != -100).sum())
    losses = []
    for begin, end in micro_batches:
        loss = LabelSmoother(epsilon=epsilon)({"logits": leaf[begin:end]}, labels[begin:end],
                                              num_items_in_batch=num_items)
        loss.backward()
        losses.append(loss.item())
    return losses, leaf.grad, num_items


def case(name, objective, logits, labels, epsilon, micro_batches=None):
    rows = logits.shape[0]
    micro_batches = micro_batches or [(0, rows)]
    losses, grad, num_items = smoothed(logits, labels, epsilon, micro_batches)
    return {"name": name, "objective": objective, "epsilon": epsilon,
            "logits_shape": list(logits.shape), "logits": logits.flatten().tolist(),
            "labels": labels.flatten().tolist(), "num_items_in_batch": num_items,
            "micro_batches": [list(m) for m in micro_batches], "losses": losses,
            "grad": grad.flatten().tolist()}


def token_labels(shape, classes, seed):
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, shape, generator=generator, dtype=torch.int64)
    ignored = torch.rand(shape, generator=generator) < 0.35  # specials, padding, later sub-tokens
    labels[ignored] = -100
    labels[:, 0] = -100  # <s>
    return labels


def main():
    cases = [
        case("sequence_classification", "single_label", random_logits((6, 3), 1),
             torch.tensor([0, 2, 1, 1, 0, 2]), 0.1),
        case("sequence_classification_two_labels_strong", "single_label", random_logits((5, 2), 2),
             torch.tensor([1, 0, 0, 1, 1]), 0.45),
        case("token_classification", "per_token", random_logits((3, 7, 5), 3),
             token_labels((3, 7), 5, 4), 0.2),
        case("token_classification_accumulated", "per_token", random_logits((4, 6, 9), 5),
             token_labels((4, 6), 9, 6), 0.1, micro_batches=[(0, 1), (1, 4)]),
        case("token_classification_uniform_only", "per_token", random_logits((2, 5, 4), 7),
             token_labels((2, 5), 4, 8), 1.0),
    ]
    golden = {"transformers_version": transformers.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "label_smoothing_golden.json")
    text = json.dumps(golden, indent=1)
    text = re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
    with open(path, "w") as f:
        f.write(text + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
