#!/usr/bin/env python3
"""Generates sentence-transformers' golden data for CoSENTLoss (framework/ops/loss.h, CosentLoss).

Run once from the repository root (needs torch, sentence-transformers and safetensors from PyPI;
tools for making these files, not dependencies of the product or of CI):

    python3 tests/golden/make_cosent_golden.py

Inputs, fixed by a seeded torch.Generator: N = 16 pairs of 12-wide embeddings a, b (normal) and
float labels on STS's grid {0, 0.2, ..., 1} (so that several are tied). CoSENTLoss with its
defaults (util.pairwise_cos_sim, scale 20) runs its compute_loss_from_embeddings on them in
float32, as a training step would. Written to tests/golden/cosent/golden.safetensors:

  a, b          [16, 12] f32   the embeddings
  labels        [16] f32
  scores        [16] f32       the scores the loss sees: scale * pairwise_cos_sim(a, b)
  loss          [] f32         CoSENTLoss, float32
  d_scores      [16] f32       d loss / d scores, float32 (the same call with the scores as a
                               leaf and scale 1, which gives the same loss bits: checked)
  d_a, d_b      [16, 12] f32   d loss / d a, d b, float32 (through pairwise_cos_sim)
  loss_f64      [] f64         CoSENTLoss in float64 on the same f32 scores (widened exactly)
  d_scores_f64  [16] f64       its gradient

The f64 pair is torch's algorithm (sorted labels, logcumsumexp) without float32's rounding, so a
double implementation of the same function must agree with it to ~1e-15.
"""
import os

import torch
from safetensors.torch import save_file
from sentence_transformers import util
from sentence_transformers.sentence_transformer.losses import CoSENTLoss

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cosent")
N = 16
H = 12
SCALE = 20.0


def make_inputs():
    g = torch.Generator().manual_seed(7)
    a = torch.randn(N, H, generator=g)
    b = a + 1.5 * torch.randn(N, H, generator=g)  # related pairs: cosines spread over (-1, 1)
    labels = torch.randint(0, 6, (N,), generator=g).float() / 5.0
    return a, b, labels


def loss_on_scores(scores, labels):
    """CoSENTLoss on precomputed scores: their similarity function returns them, scale 1."""
    loss = CoSENTLoss(model=None, scale=1.0, similarity_fct=lambda x, y: scores)
    return loss.compute_loss_from_embeddings([scores.unsqueeze(1), scores.unsqueeze(1)], labels)


def main():
    a, b, labels = make_inputs()
    leaf_a = a.clone().requires_grad_(True)
    leaf_b = b.clone().requires_grad_(True)
    loss = CoSENTLoss(model=None, scale=SCALE).compute_loss_from_embeddings([leaf_a, leaf_b], labels)
    loss.backward()
    scores = (util.pairwise_cos_sim(a, b) * SCALE).contiguous()  # what the loss multiplies out

    leaf_scores = scores.clone().requires_grad_(True)
    loss_again = loss_on_scores(leaf_scores, labels)
    loss_again.backward()
    assert loss_again.item() == loss.item(), (loss_again.item(), loss.item())

    scores_f64 = scores.double().requires_grad_(True)
    loss_f64 = loss_on_scores(scores_f64, labels.double())
    loss_f64.backward()

    tensors = {
        "a": a,
        "b": b,
        "labels": labels,
        "scores": scores,
        "loss": loss.detach().reshape(()),
        "d_scores": leaf_scores.grad.contiguous(),
        "d_a": leaf_a.grad.contiguous(),
        "d_b": leaf_b.grad.contiguous(),
        "loss_f64": loss_f64.detach().reshape(()),
        "d_scores_f64": scores_f64.grad.contiguous(),
    }
    print("labels", labels.tolist())
    print("loss f32 %.9g f64 %.17g, difference %.3g" % (loss.item(), loss_f64.item(),
                                                        abs(loss.item() - loss_f64.item())))
    print("largest |d_scores - d_scores_f64| %.3g" %
          (leaf_scores.grad.double() - scores_f64.grad).abs().max().item())
    os.makedirs(OUT, exist_ok=True)
    save_file(tensors, os.path.join(OUT, "golden.safetensors"), metadata={"format": "pt"})


if __name__ == "__main__":
    main()
