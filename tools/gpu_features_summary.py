#!/usr/bin/env python3
"""Compares each run of tools/gpu_features.sh on the device with its CPU oracle run and prints a
markdown table of measured against bound (exit 1 when a run failed or a comparison is outside).

usage: gpu_features_summary.py FEATURES_DIR --device=cuda --steps=N [--runs=RUN,...]

FEATURES_DIR holds, per run, RUN/device/ and RUN/oracle/ (output directories with
metrics.jsonl), RUN/{device,oracle}.{log,status}, and for the recompute runs
RUN/plan_{device,oracle}.txt (--print_memory_plan). Both sides ran the same flags, seed and
data, so they saw the same batches and the same dropout masks (masks are keyed by position, not
drawn from a device generator); what differs is the order of the sums and, under bf16/fp16,
which last bits those orders round away.

Bounds (argued before any GPU run; cut to the measured values after the first one):
- fp32 runs (token classification, question answering, sentence embedding, regression, BERT,
  RoBERTa, CamemBERT, both recompute runs): loss, steps 1-10, max relative difference <= 1e-6. Only summation
  order differs; the e2e part measured 2.5e-8 for the default run on an H200 (steps 1-10,
  tools/gpu_verify_summary.py), so 1e-6 leaves 40x for other shapes and heads.
  grad_norm (the global L2 norm before clipping), steps 1-10, <= 1e-5: one number summed over
  every gradient element, each within the GPU's fp32 gradient bound of 2.5e-5 relative
  (summation_order_test) but with errors of both signs, so the norm moves far less; 1e-5
  still lets a different reduction tree through. Final eval_loss and test_loss (the summary
  record) <= 1e-4 relative: by step 20 the trajectories have drifted for 10 more steps
  (assumed to grow at most tenfold from step 10 to 20 at these learning rates), and the
  evaluation's own sums differ in order again.
- bf16 (the default run under --bf16, cuda --bf16 against cpu --bf16): both round every
  autocast op's output to bf16 (8 bits of mantissa, one ulp 2^-8 = 3.9e-3 relative); a
  different summation order flips the rounding of some outputs by one ulp, and the loss
  averages thousands of them. Loss steps 1-10 <= 2e-2 relative (5 ulps; ours against HF in
  bf16 on the H200, same inputs: 5.7e-3 on the loss, 3.6e-2 on the worst gradient element,
  bench/results/gpu_first_contact.md), grad_norm steps 1-10 <= 5e-2, final eval and test
  loss <= 2e-2.
- fp16 overflow (the default run under --fp16 --loss_scale_init=2^24): the first steps'
  scaled gradients overflow fp16 on both sides by orders of magnitude, so the skip decision is
  no rounding matter: skipped and loss_scale are identical at every step (== ), and the oracle
  skips at least one step (else the run does not test what it is for). Losses steps 1-10 (of
  skipped steps too: the loss is computed before the skip) <= 5e-3 relative: ten fp16 ulps
  (2^-11 = 4.9e-4 each), as the CPU's and the GPU's fused attention tile their fp16 sums
  differently (ours against HF on an H200, same inputs: 1.1e-3 on the loss of the head-64
  fp16 model, bench/results/gpu_first_contact.md), and wide enough for the updates after the
  skips; a wrong unscale or a step not skipped moves the losses far more. grad_norm of the
  steps neither side skipped <= 2e-2, final eval and test loss <= 1e-2.
- recompute (--activation_memory_budget; selective: --attention=eager, plan SK; packed: fused,
  plan RK), on 16 rows that each fill 128 tokens at batch 16, so every step has the probed
  shape: both sides choose the same plan, and the plan has the expected kind of recompute.
  The oracle's peak_activation_bytes equals the predicted activation peak at every step
  (docs/CONTRACT.md: exact for a step of the probed shape, tests/recipes:memory_plan_flags_test),
  and its peak_device_bytes equals weights + gradients + optimizer state (--print_memory_plan's
  --zero_stage=0 column) + that prediction + the step state's 4000 bytes (STEP_STATE_RING_BYTES,
  workspace the plan does not count). The device's plan is probed on the device's own
  allocator, so the same holds there except for what lives in host memory on a GPU: the
  prediction counts the trainer's host copies of the batch (external_bytes, under 0.1% of the
  peak at this shape), which the CPU holds in the same memory and the GPU does not. Bound: the
  device's peak_activation_bytes is at most its predicted peak and at least 99% of it, at every
  step. Its peak_device_bytes also holds what the CUDA backend allocates outside the plan's
  categories: the 32 MiB cuBLASLt workspace (kernels/cuda/device_context.h,
  MemoryCategory::kWorkspace) and the optimizer's scratch of a few bytes; bound: peak_device_bytes
  minus the predicted total in [-1%, 32 MiB + 1%] of the predicted total, at every step.
- every run: exit status 0 on both sides, and both wrote a train record for every step.
"""
import argparse
import json
import os
import re
import sys

KINDS = {
    "token_classification": "fp32", "question_answering": "fp32", "sentence_embedding": "fp32", "regression": "fp32",
    "bert": "fp32", "roberta": "fp32", "camembert": "fp32", "bf16": "bf16",
    "fp16_overflow": "fp16", "recompute_selective": "fp32", "recompute_packed": "fp32",
}
# Bounds by precision: loss and grad_norm over steps 1-10, eval/test loss at the end (relative).
LOSS = {"fp32": 1e-6, "bf16": 2e-2, "fp16": 5e-3}
GRAD_NORM = {"fp32": 1e-5, "bf16": 5e-2, "fp16": 2e-2}
FINAL = {"fp32": 1e-4, "bf16": 2e-2, "fp16": 1e-2}
# The recompute each memory run's plan must use (a letter of its plan string).
PLAN_KIND = {"recompute_selective": "S", "recompute_packed": "R"}
COMPARED_STEPS = 10
DEVICE_SLACK = 0.01  # of the prediction: the device's peak may sit this far below it
WORKSPACE_BYTES = 32 << 20  # the CUDA backend's cuBLASLt workspace, outside the plan's categories


def read_records(run_dir):
    train, summary = {}, {}
    with open(os.path.join(run_dir, "metrics.jsonl")) as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("type") == "train":
                train[record["step"]] = record
            elif record.get("type") == "summary":
                summary = record
    return train, summary


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


# The step state (kernels/common/step_state.h: kStepStateAllRows 10 rows, the ring's 8 and the
# captured step's 2, of kStepSlots 14 f64 slots, then a 288-byte StepInputs per row), device
# workspace that the memory plan does not count: part of the exact total.
STEP_STATE_RING_BYTES = 10 * 14 * 8 + 10 * 288


def plan_of(log_path):
    """(plan string, predicted activation bytes) from the run's stderr, or (None, None)."""
    try:
        text = open(log_path, errors="replace").read()
    except OSError:
        return None, None
    match = re.search(r"recompute plan (\S+) .*?predicted activation peak [^(]*\((\d+) bytes\)", text)
    return (match.group(1), int(match.group(2))) if match else (None, None)


def state_bytes(plan_path):
    """weights + gradients + optimizer state (--zero_stage=0) from --print_memory_plan, or None."""
    try:
        text = open(plan_path, errors="replace").read()
    except OSError:
        return None
    total = 0
    for row in ("weights", "gradients", "optimizer state"):
        match = re.search(rf"^\s+{row}\s+(\d+)\s+\d+\s*$", text, re.MULTILINE)
        if not match:
            return None
        total += int(match.group(1))
    return total


class Table:
    def __init__(self):
        self.failures = []
        print("| run | comparison | measured | bound | result |")
        print("|---|---|---:|---|---|")

    def row(self, run, name, measured, bound, ok):
        value = f"{measured:.3g}" if isinstance(measured, float) else str(measured)
        print(f"| {run} | {name} | {value} | {bound} | {'ok' if ok else 'FAILED'} |")
        if not ok:
            self.failures.append(f"{run}: {name}")


def last_line(path):
    try:
        lines = [line.strip() for line in open(path, errors="replace") if line.strip()]
    except OSError:
        return "no log"
    return lines[-1][:200].replace("|", "/") if lines else "empty log"


def compare_run(table, root, run, steps):
    kind = KINDS.get(run, "fp32")
    sides = {}
    for side in ("device", "oracle"):
        status_path = os.path.join(root, run, side + ".status")
        status = open(status_path).read().strip() if os.path.exists(status_path) else "not run"
        if status != "0":
            table.row(run, f"{side} run exit status", status, "0", False)
            print(f"| {run} | {side}.log: {last_line(os.path.join(root, run, side + '.log'))} | | | |")
            continue
        try:
            sides[side] = read_records(os.path.join(root, run, side))
        except (OSError, ValueError) as error:
            table.row(run, f"{side} metrics.jsonl", type(error).__name__, "readable", False)
    if len(sides) < 2:
        return
    (dev, dev_summary), (ora, ora_summary) = sides["device"], sides["oracle"]
    expected = list(range(1, steps + 1))
    table.row(run, "train records, device / oracle", f"{len(dev)} / {len(ora)}", f"steps 1-{steps} on both",
              sorted(dev) == expected and sorted(ora) == expected)
    compared = [s for s in range(1, min(COMPARED_STEPS, steps) + 1) if s in dev and s in ora]
    if not compared:
        return
    span = f"steps 1-{compared[-1]}"
    gap = max(relative(dev[s]["loss"], ora[s]["loss"]) for s in compared)
    table.row(run, f"loss, {span}, max relative", gap, f"<= {LOSS[kind]:g}", gap <= LOSS[kind])
    both = [s for s in compared if dev[s].get("grad_norm") is not None and ora[s].get("grad_norm") is not None]
    if both:
        gap = max(relative(dev[s]["grad_norm"], ora[s]["grad_norm"]) for s in both)
        table.row(run, f"grad_norm, {len(both)} steps of {span}, max relative", gap, f"<= {GRAD_NORM[kind]:g}",
                  gap <= GRAD_NORM[kind])
    for key in sorted(k for k in ora_summary if k.endswith("_loss") and isinstance(ora_summary[k], (int, float))):
        if not isinstance(dev_summary.get(key), (int, float)):
            table.row(run, f"final {key}", "missing on the device", "present", False)
            continue
        gap = relative(dev_summary[key], ora_summary[key])
        table.row(run, f"final {key}, relative", gap, f"<= {FINAL[kind]:g}", gap <= FINAL[kind])
    common = sorted(set(dev) & set(ora))
    if kind == "fp16":
        differ = [s for s in common if dev[s]["skipped"] != ora[s]["skipped"]]
        table.row(run, "skipped steps (oracle) / steps whose skip differs", f"{sum(ora[s]['skipped'] for s in common)} / "
                  f"{len(differ)}{' (first: step %d)' % differ[0] if differ else ''}", ">= 1 / == 0",
                  not differ and any(ora[s]["skipped"] for s in common))
        differ = [s for s in common if dev[s]["loss_scale"] != ora[s]["loss_scale"]]
        table.row(run, "steps whose loss_scale differs", f"{len(differ)}" + (
            f" (step {differ[0]}: {dev[differ[0]]['loss_scale']:g} vs {ora[differ[0]]['loss_scale']:g})" if differ else ""),
            "== 0", not differ)
    if run in PLAN_KIND:
        compare_memory(table, root, run, dev, ora, common)


def compare_memory(table, root, run, dev, ora, common):
    plans = {side: plan_of(os.path.join(root, run, side + ".log")) for side in ("device", "oracle")}
    (dev_plan, dev_predicted), (ora_plan, ora_predicted) = plans["device"], plans["oracle"]
    letter = PLAN_KIND[run]
    table.row(run, "recompute plan, device / oracle", f"{dev_plan} / {ora_plan}", f"equal, using {letter}",
              dev_plan is not None and dev_plan == ora_plan and letter in dev_plan)
    if dev_predicted is None or ora_predicted is None:
        table.row(run, "predicted activation peak in both logs", "missing", "present", False)
        return
    worst = max(abs(ora[s]["peak_activation_bytes"] - ora_predicted) for s in common)
    table.row(run, f"oracle peak_activation_bytes - predicted ({ora_predicted}), every step, max abs bytes", worst,
              "== 0", worst == 0)
    below = [(dev_predicted - dev[s]["peak_activation_bytes"]) / dev_predicted for s in common]
    table.row(run, f"device (predicted {dev_predicted} - peak_activation_bytes) / predicted, every step, range",
              f"{min(below):.3g} .. {max(below):.3g}", f"in [0, {DEVICE_SLACK:g}]",
              min(below) >= 0 and max(below) <= DEVICE_SLACK)
    for side, records, predicted in (("oracle", ora, ora_predicted), ("device", dev, dev_predicted)):
        state = state_bytes(os.path.join(root, run, f"plan_{side}.txt"))
        if state is None:
            table.row(run, f"{side} --print_memory_plan table", "missing", "present", False)
            continue
        total = state + predicted + STEP_STATE_RING_BYTES
        if side == "oracle":
            worst = max(abs(records[s]["peak_device_bytes"] - total) for s in common)
            table.row(run, f"oracle peak_device_bytes - predicted total ({total}), every step, max abs bytes", worst,
                      "== 0", worst == 0)
        else:
            excess = [records[s]["peak_device_bytes"] - total for s in common]
            low, high = -DEVICE_SLACK * total, WORKSPACE_BYTES + DEVICE_SLACK * total
            table.row(run, f"device peak_device_bytes - predicted total ({total}), every step, range",
                      f"{min(excess)} .. {max(excess)}", f"in [{low:.0f}, {high:.0f}] (-1%, 32 MiB + 1%)",
                      min(excess) >= low and max(excess) <= high)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--runs", default=",".join(KINDS))
    args = parser.parse_args()
    runs = [r for r in args.runs.split(",") if r]
    print(f"Each run on {args.device} (device) against the same run on the CPU (oracle): "
          f"{args.steps} steps, losses and gradient norms compared over the first "
          f"{min(COMPARED_STEPS, args.steps)}; bounds argued in tools/gpu_features_summary.py.\n")
    table = Table()
    for run in runs:
        compare_run(table, args.root, run, args.steps)
    print()
    print("failed: " + ", ".join(table.failures) if table.failures else "all comparisons within their bounds")
    return 1 if table.failures else 0


if __name__ == "__main__":
    sys.exit(main())
