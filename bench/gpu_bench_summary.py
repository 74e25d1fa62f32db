#!/usr/bin/env python3
"""Turns the runs of bench/gpu_bench.sh into one markdown table: ours against Hugging Face
transformers + PyTorch AMP (eager and sdpa attention), per model size, sequence length,
gradient-checkpointing setting, precision (fp16, bf16; fp32 on the CPU) and gradient
accumulation (micro-batches per optimizer step).

Per run, over the optimizer steps after --warmup: the median step time, the tokens of one
optimizer step (batch x seq x accumulation: 8k at accumulation 1, 32k at 4), tokens/s as the
median of per-step tokens / step time, MFU, and the peak memory. Ratios are against HF sdpa in
the same group (same size, sequence length, checkpointing, precision and accumulation): speed as
tokens/s / HF sdpa's (> 1: faster than HF sdpa), memory as peak / HF sdpa's (< 1: less).

FLOPs per token (counted, not measured): 6 x matmul parameters + 12 x layers x hidden x seq, where
the matmul parameters are the encoder's projection and feed-forward weights, layers x (4 H^2 +
2 H I): forward plus backward (3 x 2 FLOPs per weight per token) and the attention scores and
context (3 x 4 S H per token per layer). Embedding lookups, the classification head (one token
per sequence), LayerNorm, softmax, GELU and the optimizer are left out. With gradient
checkpointing the recomputed forward is not counted (model FLOPs utilization), so MFU drops by
the recompute's share. MFU = FLOPs per token x tokens/s / peak dense fp16 tensor FLOP/s (bf16's
peak is the same on every device listed below), whatever the run's precision.

Step times: HF's are CUDA events around each step; ours come from xlmr_finetune's metrics.jsonl
(tokens / tokens_per_second of each step, timed on the host around the whole step, which ends
with the loss read back, so the GPU is idle at both ends; steps a --profile run traced are
left out). Peak memory: HF's
torch.cuda.max_memory_allocated() over the training steps; ours the peak of the bytes our CUDA
allocator holds in tensors (peak_device_bytes), weights, gradients and optimizer state included
on both sides. Reserved: what each caching allocator held from the device at its peak, tensors
plus cached free blocks (HF: torch.cuda.max_memory_reserved(); ours: the CUDA memory pool's
high-water mark, peak_reserved_bytes).
"""

import argparse
import json
import statistics

# Dense fp16/bf16 tensor-core peak (no sparsity; the two are equal on each), from NVIDIA's datasheets, by device-name
# substring, most specific first.
PEAK_TFLOPS = [("H100 PCIe", 756.0), ("H100", 989.4), ("H200", 989.4), ("GH200", 989.4),
               ("A100", 312.0), ("L40S", 362.1), ("A10G", 125.0), ("L4", 121.0)]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="runs.jsonl written by gpu_bench.sh")
    parser.add_argument("--warmup", type=int, required=True, help="steps left out of the medians")
    parser.add_argument("--device_name", required=True)
    parser.add_argument("--peak_tflops", type=float, default=None, help="overrides the table above")
    return parser.parse_args()


def peak_flops(device_name, override):
    if override:
        return override * 1e12, f"{override} TFLOP/s (given)"
    for name, tflops in PEAK_TFLOPS:
        if name in device_name:
            return tflops * 1e12, f"{tflops} TFLOP/s ({name} dense fp16/bf16)"
    return None, "unknown for this device: pass --peak_tflops"


def flops_per_token(shape, seq_len):
    h, i, layers = shape["hidden_size"], shape["intermediate_size"], shape["num_hidden_layers"]
    return 6 * layers * (4 * h * h + 2 * h * i) + 12 * layers * h * seq_len


def profile_window(run):
    """The steps --profile_steps recorded in `run` (inclusive), or None."""
    if not run.get("profile_steps"):
        return None
    first, last = run["profile_steps"].split(":")
    return int(first), int(last)


def train_rows(run):
    """Our run's train rows of metrics.jsonl, less the profiled steps (tracing slows them)."""
    rows = [json.loads(line) for line in open(run["result"]) if line.strip()]
    rows = [r for r in rows if r.get("type") == "train"]
    window = profile_window(run)
    return [r for r in rows if not window or not window[0] <= r.get("step", 0) <= window[1]]


def ours_steps(run):
    steps = train_rows(run)
    tokens, milliseconds, previous = [], [], 0
    for s in steps:
        tokens.append(s["tokens"] - previous)
        previous = s["tokens"]
        milliseconds.append(1e3 * tokens[-1] / s["tokens_per_second"] if s["tokens_per_second"] else float("nan"))
    reserved = [s.get("peak_reserved_bytes") for s in steps]
    return {"step_ms": milliseconds, "step_tokens": tokens,
            "peak_bytes": max(s["peak_device_bytes"] for s in steps) if steps else None,
            "reserved_bytes": max(reserved) if reserved and None not in reserved else None}


def hf_steps(result_path):
    result = json.load(open(result_path))
    return {"step_ms": result["step_ms"], "step_tokens": result["step_tokens"],
            "peak_bytes": result["peak_allocated_bytes"], "reserved_bytes": result.get("peak_reserved_bytes")}


def measure(run, warmup, peak):
    steps = ours_steps(run) if run["runner"].startswith("ours") else hf_steps(run["result"])
    ms, tokens = steps["step_ms"][warmup:], steps["step_tokens"][warmup:]
    if not ms:
        return {"error": f"no steps after the {warmup} warm-up steps"}
    expected = step_tokens(run)
    if any(t != expected for t in tokens):
        return {"error": f"steps had {sorted(set(tokens))} tokens, expected {expected} (padding?)"}
    tokens_per_second = statistics.median(t / (m / 1e3) for t, m in zip(tokens, ms))
    mfu = flops_per_token(run["shape"], run["seq_len"]) * tokens_per_second / peak if peak else None
    return {"step_ms": statistics.median(ms), "tokens_per_second": tokens_per_second, "mfu": mfu,
            "peak_bytes": steps["peak_bytes"], "reserved_bytes": steps["reserved_bytes"], "steps": len(ms)}


def step_tokens(run):
    """Tokens of one optimizer step: every row fills the sequence."""
    return run["batch_size"] * run["seq_len"] * run.get("accumulation", 1)


def configuration(run):
    """What a run's ratios compare against HF sdpa's: everything but the runner."""
    return (run["size"], run["seq_len"], run["checkpointing"], run.get("precision", "fp16"),
            run.get("accumulation", 1))


def head_cells(run):
    return (f"| {run['size']} | {run['seq_len']} | {run['batch_size']} | {run.get('accumulation', 1)} | "
            f"{step_tokens(run):,} | {run.get('precision', 'fp16')} | {run['checkpointing']} |")


def ratio(value, reference):
    return f"{value / reference:.2f}" if value and reference else "n/a"


def group_rows(runs, warmup, peak):
    rows = []
    measured = {}
    for run in runs:
        measured[id(run)] = measure(run, warmup, peak) if run["status"] == "ok" else {"error": run["reason"]}
    reference = {}
    for run in runs:
        m = measured[id(run)]
        if run["runner"] == "hf-sdpa" and "error" not in m:
            reference[configuration(run)] = m
    for run in runs:
        m = measured[id(run)]
        key = configuration(run)
        head = f"{head_cells(run)} {run['runner']} |"
        if "error" in m:
            rows.append(f"{head} not run: {m['error']} | | | | | | |")
            continue
        ref = reference.get(key, {})
        mfu = f"{100 * m['mfu']:.1f}%" if m["mfu"] is not None else "n/a"
        peak_gib = f"{m['peak_bytes'] / 2**30:.2f}" if m["peak_bytes"] else "n/a"
        reserved_gib = f"{m['reserved_bytes'] / 2**30:.2f}" if m["reserved_bytes"] else "n/a"
        rows.append(f"{head} {m['step_ms']:.1f} | {m['tokens_per_second']:,.0f} | {mfu} | {peak_gib} | "
                    f"{reserved_gib} | "
                    f"{ratio(m['tokens_per_second'], ref.get('tokens_per_second'))} | "
                    f"{ratio(m['peak_bytes'], ref.get('peak_bytes'))} |")
    return rows


def launch_rows(runs, warmup):
    """Per successful run of ours: median kernel launches and host waits per measured step."""
    rows = []
    for run in runs:
        if not run["runner"].startswith("ours") or run["status"] != "ok":
            continue
        steps = train_rows(run)[warmup:]
        cells = []
        for key in ("kernel_launches", "host_waits"):
            values = [s.get(key) for s in steps]
            cells.append(f"{statistics.median(values):,.0f}" if values and None not in values else "n/a")
        where = f"{run['profile']}/ (steps {run['profile_steps']})" if run.get("profile") else ""
        rows.append(f"{head_cells(run)} {run['runner']} | {cells[0]} | {cells[1]} | {where} |")
    return rows


def main():
    args = parse_args()
    runs = [json.loads(line) for line in open(args.runs) if line.strip()]
    peak, peak_note = peak_flops(args.device_name, args.peak_tflops)
    print(f"Device: {args.device_name}; MFU peak: {peak_note}. Medians over the optimizer steps after "
          f"{args.warmup} warm-up steps; accum: micro-batches of `batch` per optimizer step, whose "
          f"tokens are `tokens/step`. Speed ratio: tokens/s / HF sdpa's; memory ratio: peak / "
          f"HF sdpa's (same size, sequence length, checkpointing, precision and accumulation).\n")
    print("| size | seq | batch | accum | tokens/step | precision | grad ckpt | runner | step ms | tokens/s | "
          "MFU | peak GiB | reserved GiB | speed vs HF sdpa | memory vs HF sdpa |")
    print("|" + " --- |" * 15)
    for row in group_rows(runs, args.warmup, peak):
        print(row)
    launches = launch_rows(runs, args.warmup)
    if launches:
        print("\nOurs per step (medians over the same steps, from metrics.jsonl): kernel launches "
              "and blocking host waits as the CUDA backend's CUPTI tracer counts them (n/a: no "
              "CUPTI; on the CPU, the ops dispatched and 0); the profile of the steps after them.\n")
        print("| size | seq | batch | accum | tokens/step | precision | grad ckpt | runner | kernel launches | "
              "host waits | profile |")
        print("|" + " --- |" * 11)
        for row in launches:
            print(row)


if __name__ == "__main__":
    main()
