#!/usr/bin/env python3
"""Writes lr_schedule_golden.json: the learning rate that Hugging Face's schedulers give each
optimizer step, which tests/framework/optim/lr_schedule_test.cc compares with
xlmr::optim::LrSchedule.

Run from the repository root (torch and transformers pip-installed):
    python3 tests/framework/optim/testdata/make_lr_schedule_golden.py

For every case the script builds transformers.get_scheduler(type, optimizer, num_warmup_steps,
num_training_steps, scheduler_specific_kwargs=kwargs) over a torch.optim.AdamW whose lr is base_lr, and records
optimizer.param_groups[0]["lr"] before each optimizer step, then calls scheduler.step() after
it, as the Trainer does: lrs[s - 1] is the rate of optimizer step s (1-based). Two steps past
total_steps are recorded too, to pin down the clamping at the end. Every type of
xlmr::optim::LrScheduleType appears, with warmup and, where the type takes any, with
--lr_scheduler_kwargs (`kwargs`, passed to our MakeLrSchedule as JSON text).

The number of warmup steps is what transformers' TrainingArguments.get_warmup_steps gives: in
transformers 5 a ratio is passed as a float warmup_steps < 1, and the rule is
ceil(total_steps * ratio) (transformers 4's --warmup_ratio, used when --warmup_steps is 0);
`warmup_steps` and `warmup_ratio` below are the inputs of our MakeLrSchedule, and
`resolved_warmup_steps` is HF's answer. Learning rates are Python floats (doubles), written with
repr, so they round-trip exactly.
"""
import json
import os
import re
from types import SimpleNamespace

import torch
import transformers
from transformers import TrainingArguments, get_scheduler

# (type, base_lr, total_steps, warmup_steps, warmup_ratio, kwargs)
CASES = [
    ("linear", 2e-5, 10, 0, 0.0, {}),
    ("linear", 5e-5, 37, 0, 0.1, {}),    # ceil(3.7) = 4 warmup steps
    ("linear", 3e-4, 100, 0, 0.07, {}),  # 100 * 0.07 = 7.000000000000001, so ceil gives 8, not 7
    ("linear", 1e-3, 12, 5, 0.0, {}),
    ("linear", 1e-3, 6, 6, 0.0, {}),     # warmup as long as training
    ("cosine", 2e-5, 20, 5, 0.0, {}),
    ("cosine", 1e-4, 33, 0, 0.06, {}),
    ("cosine", 7e-5, 9, 0, 0.0, {}),
    ("constant", 2e-5, 8, 3, 0.0, {}),   # HF's constant schedule ignores warmup
    ("constant_with_warmup", 2e-5, 8, 3, 0.0, {}),
    ("constant_with_warmup", 4e-5, 10, 0, 0.25, {}),
    ("cosine", 3e-5, 25, 3, 0.0, {"num_cycles": 1.5}),
    ("cosine_with_restarts", 2e-5, 30, 4, 0.0, {}),
    ("cosine_with_restarts", 5e-5, 40, 0, 0.1, {"num_cycles": 3}),
    ("polynomial", 1e-4, 20, 3, 0.0, {}),
    ("polynomial", 1e-4, 25, 0, 0.1, {"lr_end": 1e-5, "power": 2.0}),
    ("polynomial", 3e-5, 17, 2, 0.0, {"lr_end": 0.0, "power": 0.5}),
    ("inverse_sqrt", 1e-3, 30, 5, 0.0, {}),           # timescale = the warmup
    ("inverse_sqrt", 1e-3, 12, 0, 0.0, {}),           # timescale 10000 without warmup
    ("inverse_sqrt", 2e-4, 20, 3, 0.0, {"timescale": 7}),
    ("cosine_with_min_lr", 1e-4, 30, 4, 0.0, {"min_lr_rate": 0.1}),
    ("cosine_with_min_lr", 1e-4, 21, 0, 0.1, {"min_lr": 1e-5, "num_cycles": 1.0}),
    ("cosine_warmup_with_min_lr", 1e-4, 30, 5, 0.0, {"min_lr_rate": 0.05}),
    ("cosine_warmup_with_min_lr", 2e-4, 24, 4, 0.0, {"min_lr": 2e-5, "warmup_lr_rate": 0.2}),
    ("cosine_warmup_with_min_lr", 2e-4, 10, 1, 0.0, {"min_lr_rate": 0.0, "warmup_lr_rate": 0.5}),
    ("warmup_stable_decay", 1e-4, 40, 5, 0.0, {"num_decay_steps": 10}),
    ("warmup_stable_decay", 1e-4, 30, 5, 0.0,
     {"num_decay_steps": 10, "num_stable_steps": 8, "warmup_type": "cosine",
      "decay_type": "linear", "min_lr_ratio": 0.1}),   # ends 7 steps early, at min_lr_ratio
    ("warmup_stable_decay", 5e-5, 33, 0, 0.2,
     {"num_decay_steps": 12, "warmup_type": "1-sqrt", "decay_type": "1-sqrt",
      "min_lr_ratio": 0.05}),
    ("warmup_stable_decay", 5e-5, 30, 10, 0.0,
     {"num_decay_steps": 25, "num_cycles": 1.0}),     # warmup + decay overrun: stable is -5
]


def resolve_warmup(total_steps, warmup_steps, warmup_ratio):
    # transformers 5 folds the ratio into warmup_steps (a float < 1 is a ratio).
    requested = warmup_steps if warmup_steps > 0 else warmup_ratio
    return TrainingArguments.get_warmup_steps(SimpleNamespace(warmup_steps=requested), total_steps)


def learning_rates(schedule_type, base_lr, total_steps, num_warmup_steps, kwargs):
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([parameter], lr=base_lr)
    scheduler = get_scheduler(schedule_type, optimizer, num_warmup_steps=num_warmup_steps,
                              num_training_steps=total_steps,
                              scheduler_specific_kwargs=dict(kwargs))
    rates = []
    for _ in range(total_steps + 2):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()  # no gradients: a no-op that keeps the scheduler's order check quiet
        scheduler.step()
    return rates


def compact_number_lists(text):
    """Puts every list of plain numbers on one line."""
    def join(match):
        return "[" + ", ".join(x.strip() for x in match.group(1).split(",")) + "]"
    return re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]", join, text)


def main():
    cases = []
    for schedule_type, base_lr, total, warmup_steps, warmup_ratio, kwargs in CASES:
        resolved = resolve_warmup(total, warmup_steps, warmup_ratio)
        cases.append({
            "type": schedule_type, "base_lr": base_lr, "total_steps": total,
            "warmup_steps": warmup_steps, "warmup_ratio": warmup_ratio,
            "resolved_warmup_steps": resolved, "kwargs": kwargs,
            "lrs": learning_rates(schedule_type, base_lr, total, resolved, kwargs),
        })
    golden = {"transformers_version": transformers.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lr_schedule_golden.json")
    with open(path, "w") as f:
        f.write(compact_number_lists(json.dumps(golden, indent=1)) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
