#!/usr/bin/env python3
"""Turns the runs of bench/cpu_train_bench.sh into one markdown table (ours vs Hugging Face).

Per run, over the measured steps (warm-up steps excluded): the median step time, tokens/s as the
median of per-step (non-padding tokens / step seconds), achieved GFLOP/s as the median of per-step
(matmul FLOPs / step seconds), and peak memory. Ratios are ours / theirs for speed and
theirs / ours for memory, so > 1 means ours is better in both.

FLOPs (counted, not measured; the same for every run since the batches are the same): per step
3x the forward matrix products of the padded batch [B, S] (forward + backward = 3 forward):
per layer 2BS(4H^2 + 2HI) for the projections and feed-forward plus 4BS^2H for attention
scores and context, plus the head 2B(H^2 + HL) on the <s> token. Embeddings, LayerNorm,
softmax, GELU and the optimizer are left out (a few percent at this size).
"""

import argparse
import json
import statistics


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="the model's config.json")
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--ours_metrics", required=True, help="xlmr_finetune's metrics.jsonl")
    parser.add_argument("--ours_max_rss_kib", type=int, required=True, help="/usr/bin/time %%M")
    parser.add_argument("--hf", action="append", default=[], help="LABEL=hf_train_cpu.py's JSON output")
    return parser.parse_args()


def step_flops(config, batch, length, num_labels):
    h, i, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    per_layer = 2 * batch * length * (4 * h * h + 2 * h * i) + 4 * batch * length * length * h
    head = 2 * batch * (h * h + h * num_labels)
    return 3 * (layers * per_layer + head)


def ours_run(path, max_rss_kib):
    steps = [json.loads(line) for line in open(path)]
    steps = [s for s in steps if s["type"] == "train"]
    tokens, previous = [], 0
    for s in steps:
        tokens.append(s["tokens"] - previous)
        previous = s["tokens"]
    return {"step_tokens": tokens, "step_seconds": [t / s["tokens_per_second"] for t, s in zip(tokens, steps)],
            "peak_rss_bytes": max_rss_kib * 1024,
            "peak_device_bytes": max(s["peak_device_bytes"] for s in steps)}


def summarize(run, shapes, config, num_labels, warmup):
    measured = range(warmup, len(run["step_seconds"]))
    seconds = [run["step_seconds"][k] for k in measured]
    tokens_per_second = [run["step_tokens"][k] / run["step_seconds"][k] for k in measured]
    gflops = [step_flops(config, *shapes[k], num_labels) / run["step_seconds"][k] / 1e9 for k in measured]
    return {"step_ms": 1e3 * statistics.median(seconds), "tokens_per_second": statistics.median(tokens_per_second),
            "gflops": statistics.median(gflops), "steps": len(seconds)}


def mib(value):
    return f"{value / 2**20:.0f}" if value is not None else "n/a"


def main():
    args = parse_args()
    config = json.load(open(args.config))
    ours = ours_run(args.ours_metrics, args.ours_max_rss_kib)
    hf_runs = {}
    for spec in args.hf:
        label, path = spec.split("=", 1)
        hf_runs[label] = json.load(open(path))
    reference = next(iter(hf_runs.values()))
    shapes = reference["batch_shapes"]
    num_labels = len(config["id2label"])
    for label, run in hf_runs.items():
        same = run["step_tokens"] == ours["step_tokens"]
        print(f"- batches identical to ours ({label}): {'yes' if same else 'NO'} "
              f"({len(run['step_tokens'])} steps, {sum(run['step_tokens'])} tokens)")
        if not same:
            raise SystemExit("the runs did not train on the same batches: not comparable")
    s = summarize(ours, shapes, config, num_labels, args.warmup)
    print(f"- measured steps: {s['steps']} after {args.warmup} warm-up steps; median padded length "
          f"{statistics.median(length for _, length in shapes):.0f} tokens, "
          f"{statistics.median(step_flops(config, b, l, num_labels) for b, l in shapes) / 1e9:.2f} GFLOP/step")
    print()
    print("| run | median step (ms) | tokens/s | GFLOP/s | peak RSS (MiB) | RSS before training (MiB) "
          "| peak_device_bytes (MiB) | speed ours/this | peak RSS this/ours |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| ours (xlmr_finetune -c opt) | {s['step_ms']:.1f} | {s['tokens_per_second']:.0f} | {s['gflops']:.2f} "
          f"| {mib(ours['peak_rss_bytes'])} | n/a | {mib(ours['peak_device_bytes'])} | 1.00 | 1.00 |")
    for label, run in hf_runs.items():
        t = summarize(run, shapes, config, num_labels, args.warmup)
        print(f"| HF {label} | {t['step_ms']:.1f} | {t['tokens_per_second']:.0f} | {t['gflops']:.2f} "
              f"| {mib(run['peak_rss_bytes'])} | {mib(run['rss_before_training_bytes'])} | n/a "
              f"| {s['tokens_per_second'] / t['tokens_per_second']:.2f} "
              f"| {run['peak_rss_bytes'] / ours['peak_rss_bytes']:.2f} |")


if __name__ == "__main__":
    main()
