#!/usr/bin/env python3
"""Draws one PNG of a training run from its metrics.jsonl (docs/CONTRACT.md).

    python3 tools/plot_metrics.py RUN_DIR [--output FILE.png]

RUN_DIR is xlmr_finetune's --output_dir (or a metrics.jsonl file itself). Writes
RUN_DIR/metrics.png unless --output says otherwise. Panels: training loss with the evaluation
loss, evaluation accuracy / macro-F1 (/ ROC AUC), learning rate, loss scale with the skipped
(overflowed) steps marked, gradient norm, tokens per second, and peak memory per step.

Needs matplotlib (pip install matplotlib): a developer tool, not a dependency of the trainer.
Errors are one line on stderr, exit status 2.
"""

import argparse
import json
import os
import sys


def fail(message):
    print(f"plot_metrics: {message}", file=sys.stderr)
    sys.exit(2)


def read_records(path):
    """The train and eval records of metrics.jsonl, in file order; the summary if present."""
    train, evals, summary = [], [], None
    try:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    fail(f"{path}:{number}: not a JSON object ({error.msg})")
                if not isinstance(record, dict) or "type" not in record:
                    fail(f"{path}:{number}: expected an object with a \"type\"")
                kind = record["type"]
                if kind == "train":
                    train.append(record)
                elif kind == "eval":
                    evals.append(record)
                elif kind == "summary":
                    summary = record
    except OSError as error:
        fail(f"{path}: cannot read ({error.strerror})")
    if not train:
        fail(f"{path}: no train records to plot")
    for number, record in enumerate(train, start=1):
        for key in ("step", "loss", "lr", "loss_scale", "skipped", "tokens_per_second"):
            if key not in record:
                fail(f"{path}: train record {number} has no \"{key}\"")
    return train, evals, summary


def column(records, key):
    """(steps, values) of `key` where it is a number (null grad norms of skipped steps left out)."""
    pairs = [(r["step"], r[key]) for r in records if isinstance(r.get(key), (int, float))
             and not isinstance(r.get(key), bool)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def plot(train, evals, summary, title, output, pyplot):
    figure, axes = pyplot.subplots(4, 2, figsize=(12, 12), constrained_layout=True)
    figure.suptitle(title)
    loss_ax, eval_ax, lr_ax, scale_ax, norm_ax, speed_ax, memory_ax, text_ax = axes.flat

    steps, loss = column(train, "loss")
    loss_ax.plot(steps, loss, linewidth=0.8, label="train loss")
    eval_steps, eval_loss = column(evals, "eval_loss")
    if eval_steps:
        loss_ax.plot(eval_steps, eval_loss, "o-", label="eval loss")
    loss_ax.set_title("loss")
    loss_ax.legend()

    for key in ("eval_accuracy", "eval_macro_f1", "eval_roc_auc"):
        xs, ys = column(evals, key)
        if xs:
            eval_ax.plot(xs, ys, "o-", label=key[len("eval_"):])
    eval_ax.set_title("evaluation" if evals else "evaluation (none in this run)")
    if evals:
        eval_ax.legend()

    lr_ax.plot(*column(train, "lr"))
    lr_ax.set_title("learning rate")

    scale_ax.plot(*column(train, "loss_scale"), linewidth=0.8)
    skipped = [r for r in train if r.get("skipped") is True]
    if skipped:
        scale_ax.plot([r["step"] for r in skipped], [r["loss_scale"] for r in skipped], "rx",
                      label=f"skipped step ({len(skipped)})")
        scale_ax.legend()
    scale_ax.set_yscale("log", base=2)
    scale_ax.set_title("loss scale")

    norm_ax.plot(*column(train, "grad_norm"), linewidth=0.8)
    norm_ax.set_title("gradient norm (before clipping)")

    speed_ax.plot(*column(train, "tokens_per_second"), linewidth=0.8)
    speed_ax.set_title("tokens / s")

    for key, label in (("peak_device_bytes", "device peak"), ("peak_activation_bytes", "activations peak"),
                       ("peak_reserved_bytes", "pool reserved peak")):
        xs, ys = column(train, key)
        if xs:
            memory_ax.plot(xs, [y / 2**20 for y in ys], label=label)
    memory_ax.set_title("memory per step (MiB)")
    memory_ax.legend()

    for ax in (loss_ax, eval_ax, lr_ax, scale_ax, norm_ax, speed_ax, memory_ax):
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)

    text_ax.axis("off")
    lines = [f"steps: {train[-1]['step']}", f"skipped steps: {len(skipped)}"]
    if summary is not None:
        lines += [f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}"
                  for key, value in summary.items() if key not in ("type", "steps", "skipped_steps")]
    else:
        lines.append("no summary line: the run did not finish")
    text_ax.text(0, 1, "\n".join(lines), va="top", family="monospace")

    figure.savefig(output, dpi=72)
    pyplot.close(figure)


def main():
    parser = argparse.ArgumentParser(description="One PNG of a training run's metrics.jsonl.")
    parser.add_argument("run_dir", help="xlmr_finetune's --output_dir, or a metrics.jsonl file")
    parser.add_argument("--output", help="the PNG to write (default: RUN_DIR/metrics.png)")
    args = parser.parse_args()
    if not os.path.exists(args.run_dir):
        fail(f"{args.run_dir}: no such run directory or metrics file")
    if os.path.isdir(args.run_dir):
        metrics = os.path.join(args.run_dir, "metrics.jsonl")
        output = args.output or os.path.join(args.run_dir, "metrics.png")
    else:
        metrics = args.run_dir
        output = args.output or os.path.join(os.path.dirname(args.run_dir) or ".", "metrics.png")
    train, evals, summary = read_records(metrics)
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only; no display needed
        from matplotlib import pyplot
    except ImportError:
        fail("needs matplotlib, which is not installed: pip install matplotlib")
    plot(train, evals, summary, metrics, output, pyplot)
    print(output)


if __name__ == "__main__":
    main()
