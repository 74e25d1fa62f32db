#!/usr/bin/env python3
"""Writes adamw_golden.json: torch.optim.AdamW trajectories that tests/framework/optim/adamw_test.cc
replays with xlmr::optim::AdamW.

Run from the repository root (torch 2.x pip-installed; CPU only):
    python3 tests/framework/optim/testdata/make_adamw_golden.py

Each case builds four small parameters laid out as the C++ ParameterStore lays them out (in the
order listed), puts the decayed ones in a group with the case's weight_decay and the others in a
group with weight_decay 0.0 (what the Hugging Face Trainer does for biases and LayerNorm
weights), and runs 5 optimizer steps with a different learning rate each step and recorded
gradients. Parameter sizes are not multiples of 8 or 16, so torch's vectorized loops and their
scalar tails are both exercised.

torch runs on the CPU with foreach=False: the for-loop ("single tensor") implementation, which
is what torch picks by default for CPU tensors; on CUDA its default is the foreach
implementation, with the same formula. One CPU quirk matters for the tolerance: torch's CPU
float sqrt (MKL/Sleef vector code) is not correctly rounded (it is 1 ulp off for roughly a fifth
of the inputs), while the C++ code uses the IEEE sqrt (as CUDA's sqrtf does). sqrt only feeds
the parameter update, never the moments, so exp_avg and exp_avg_sq are reproduced bit for bit
and the parameters within a few ulps.

Every float is written with Python's repr of the exact float32 value (as a double), so the C++
side recovers the identical float32.
"""
import json
import os
import re

import torch

STEPS = 5
# (name, shape, weight_decay): decayed and undecayed parameters alternate, so the C++ pass
# sees several decay segments rather than one.
PARAMS = [
    ("dense.weight", [3, 5], True),
    ("dense.bias", [5], False),
    ("out_proj.weight", [4, 6], True),
    ("LayerNorm.weight", [7], False),
]
CASES = [
    # Hugging Face TrainingArguments defaults for betas and epsilon, with weight decay.
    {"name": "hf_defaults", "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01,
     "lrs": [1e-3, 2e-3, 1.5e-3, 5e-4, 3.3e-5]},
    # beta1 < 0.5 makes the lerp weight 1 - beta1 >= 0.5, torch's other lerp formula.
    {"name": "large_lerp_weight", "beta1": 0.3, "beta2": 0.9, "eps": 1e-6, "weight_decay": 0.1,
     "lrs": [5e-2, 1e-2, 7e-3, 2e-2, 1e-3]},
]


def floats(tensor):
    return [float(x) for x in tensor.detach().reshape(-1).tolist()]


def make_gradient(generator, shape, step):
    # Magnitudes from 1e-3 to 1e2 across steps, plus an exact zero (m and v stay 0 there in
    # step 1, so the update is 0 / eps).
    grad = torch.randn(shape, generator=generator) * (10.0 ** (step - 2))
    if step == 0:
        grad.view(-1)[0] = 0.0
    return grad


def run_case(case, generator):
    params = [torch.nn.Parameter(torch.randn(shape, generator=generator))
              for _, shape, _ in PARAMS]
    initial = [floats(p) for p in params]
    decayed = [p for p, (_, _, wd) in zip(params, PARAMS) if wd]
    undecayed = [p for p, (_, _, wd) in zip(params, PARAMS) if not wd]
    optimizer = torch.optim.AdamW(
        [{"params": decayed, "weight_decay": case["weight_decay"]},
         {"params": undecayed, "weight_decay": 0.0}],
        lr=case["lrs"][0], betas=(case["beta1"], case["beta2"]), eps=case["eps"], foreach=False)
    steps = []
    for step, lr in enumerate(case["lrs"]):
        for group in optimizer.param_groups:
            group["lr"] = lr
        grads = [make_gradient(generator, shape, step) for _, shape, _ in PARAMS]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        optimizer.step()
        steps.append({
            "lr": lr,
            "grads": [floats(g) for g in grads],
            "params_after": [floats(p) for p in params],
            "exp_avg_after": [floats(optimizer.state[p]["exp_avg"]) for p in params],
            "exp_avg_sq_after": [floats(optimizer.state[p]["exp_avg_sq"]) for p in params],
        })
    return {
        "name": case["name"], "beta1": case["beta1"], "beta2": case["beta2"],
        "eps": case["eps"], "weight_decay": case["weight_decay"],
        "params": [{"name": n, "shape": s, "weight_decay": wd, "initial": init}
                   for (n, s, wd), init in zip(PARAMS, initial)],
        "steps": steps,
    }


def compact_number_lists(text):
    """Puts every list of plain numbers on one line (readable diffs, a third of the size)."""
    def join(match):
        return "[" + ", ".join(x.strip() for x in match.group(1).split(",")) + "]"
    return re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]", join, text)


def main():
    generator = torch.Generator().manual_seed(20240607)
    golden = {"torch_version": torch.__version__,
              "cases": [run_case(case, generator) for case in CASES]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adamw_golden.json")
    with open(path, "w") as f:
        f.write(compact_number_lists(json.dumps(golden, indent=1)) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
