#!/usr/bin/env python3
"""Writes grad_clip_golden.json: torch.nn.utils.clip_grad_norm_ on a few gradients, which
tests/framework/optim/grad_clip_test.cc compares with xlmr::optim::GlobalL2Norm and ClipGradNorm.

Run from the repository root (torch 2.x pip-installed; CPU only):
    python3 tests/framework/optim/testdata/make_grad_clip_golden.py

Each case clips three gradients (concatenated in the JSON in the order of a flat buffer) with
one max_norm and records torch's total norm (a float32 computed with float32 accumulation) and
the clipped gradients. Floats are written with repr of the exact float32 value, so they
round-trip exactly.
"""
import json
import os
import re

import torch

SHAPES = [[3, 7], [11], [2, 2, 5]]
# max_norm below the norm (clips), far above it (no clipping), and a small one.
MAX_NORMS = [1.0, 1000.0, 0.05]


def floats(tensors):
    return [float(x) for t in tensors for x in t.reshape(-1).tolist()]


def compact_number_lists(text):
    """Puts every list of plain numbers on one line."""
    def join(match):
        return "[" + ", ".join(x.strip() for x in match.group(1).split(",")) + "]"
    return re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]", join, text)


def main():
    generator = torch.Generator().manual_seed(7)
    cases = []
    for index, max_norm in enumerate(MAX_NORMS):
        params = [torch.nn.Parameter(torch.zeros(shape)) for shape in SHAPES]
        for p in params:
            p.grad = torch.randn(p.shape, generator=generator) * (0.5 + index)
        grads = floats(p.grad for p in params)
        total_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        cases.append({"max_norm": max_norm, "grads": grads,
                      "total_norm": float(total_norm), "clipped": floats(p.grad for p in params)})
    golden = {"torch_version": torch.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_clip_golden.json")
    with open(path, "w") as f:
        f.write(compact_number_lists(json.dumps(golden, indent=1)) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
