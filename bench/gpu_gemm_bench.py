#!/usr/bin/env python3
"""PyTorch's GEMMs at bench/gpu_gemm_bench.cc's shapes, and the table comparing them with ours.

  python3 bench/gpu_gemm_bench.py torch [--tokens=8192] [--dtype=f16|bf16] [--repeats=20] [--warmup=3]
  python3 bench/gpu_gemm_bench.py table --heuristic=H.jsonl --measured=M.jsonl --torch=T.jsonl

torch: for the base and large encoders' Linears (attention H->H, intermediate H->I, output I->H)
on --tokens rows, times on CUDA, as gpu_gemm_bench does (--warmup untimed calls, then the mean
of --repeats calls between two CUDA events), what a PyTorch AMP training step runs:
  forward      torch.nn.functional.linear(x, w, b)          x, w, b and y in --dtype
  input_grad   dy @ w
  weight_grad  dy.t() @ x alone: the product figure. Ours accumulates into an f32 gradient
               (beta 1), which torch cannot do from 16-bit operands in one call (addmm_ wants
               one dtype), so `dw += (dy.t() @ x).float()` is timed too and reported as
               ms_with_f32_accumulate, not in the table.
PyTorch's matmul settings stay at their defaults (those of a Hugging Face run). One JSON object
per product on stdout, with gpu_gemm_bench's keys and algorithms "torch".

table: a markdown table of the three runs' TFLOP/s per product, their ratios, whether our
weight gradient took cuBLASLt's BGRADB epilogue, and our plan counts. A missing or empty file
leaves its column blank (a run that failed in the GPU kit). Needs no torch.
"""
import argparse
import json
import sys

import cuda_event_timing

SIZES = [("base", 768, 3072), ("large", 1024, 4096)]


def linears(hidden, intermediate):
    return [("attention", hidden, hidden), ("intermediate", hidden, intermediate),
            ("output", intermediate, hidden)]


def run_torch(args):
    import torch  # here, so that `table` runs where torch is not installed

    if not torch.cuda.is_available():
        sys.exit(f"gpu_gemm_bench.py torch: torch {torch.__version__} sees no CUDA device")
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]

    def random(*shape):  # small values, as gpu_gemm_bench's
        return torch.empty(*shape, device="cuda", dtype=dtype).uniform_(-0.1, 0.1)

    def mean_ms(product):
        return cuda_event_timing.mean_ms(product, args.warmup, args.repeats)

    def emit(size, linear, product, m, n, k, ms, **extra):
        record = {"size": size, "linear": linear, "product": product, "m": m, "n": n, "k": k,
                  "dtype": args.dtype, "algorithms": "torch", "ms": ms,
                  "tflops": 2.0 * m * n * k / ms / 1e9, **extra}
        print(json.dumps(record), flush=True)

    torch.manual_seed(42)
    t = args.tokens
    with torch.no_grad():
        for size, hidden, intermediate in SIZES:
            for linear, n_in, n_out in linears(hidden, intermediate):
                x, w, b, dy = random(t, n_in), random(n_out, n_in), random(n_out), random(t, n_out)
                dw = torch.zeros(n_out, n_in, device="cuda", dtype=torch.float32)
                emit(size, linear, "forward", t, n_out, n_in,
                     mean_ms(lambda: torch.nn.functional.linear(x, w, b)))
                emit(size, linear, "input_grad", t, n_in, n_out, mean_ms(lambda: dy @ w))
                accumulate_ms = mean_ms(lambda: dw.add_((dy.t() @ x).float()))
                emit(size, linear, "weight_grad", n_out, n_in, t, mean_ms(lambda: dy.t() @ x),
                     row_sums_fused=False, ms_with_f32_accumulate=accumulate_ms)
    return 0


def read_run(path):
    """{(size, linear, product): record} and the plan-count line of one JSON-lines file."""
    products, plans = {}, None
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return products, plans
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            sys.exit(f"gpu_gemm_bench.py table: {path}:{number}: not JSON: {line[:80]}")
        if "plans" in record:
            plans = record
        else:
            products[(record["size"], record["linear"], record["product"])] = record
    return products, plans


def cell(value, digits):
    return "" if value is None else f"{value:.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def tflops(run, key):
    record = run.get(key)
    return record["tflops"] if record else None


def fused_cell(heuristic, measured, key):
    flags = [r["row_sums_fused"] for r in (heuristic.get(key), measured.get(key))
             if r and "row_sums_fused" in r]
    if not flags:
        return ""
    return ("yes" if flags[0] else "no") if len(set(flags)) == 1 else "heuristic/measured differ"


def plans_line(name, plans):
    if plans is None:
        return f"- {name}: no plan counts (the run did not finish)"
    return (f"- {name}: {plans['plans']} problems planned, {plans['measured']} by timing, "
            f"{plans['candidates_timed']} candidates timed")


def run_table(args):
    (heuristic, heuristic_plans), (measured, measured_plans), (torch_run, _) = (
        read_run(args.heuristic), read_run(args.measured), read_run(args.torch))
    keys = list(dict.fromkeys([*heuristic, *measured, *torch_run]))
    records = [r for run in (heuristic, measured, torch_run) for r in run.values()]
    dtypes = sorted({r["dtype"] for r in records})
    print(f"GEMMs at the model's Linear shapes, dtype {', '.join(dtypes) or '?'}, "
          f"{max((r['k'] for r in records if r['product'] == 'weight_grad'), default='?')} tokens")
    print()
    print("| size | linear | product | m | n | k | heuristic TFLOP/s | measured TFLOP/s | torch TFLOP/s "
          "| measured/heuristic | measured/torch | BGRADB fused |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for key in keys:
        shape = next(run[key] for run in (heuristic, measured, torch_run) if key in run)
        h, m, t = tflops(heuristic, key), tflops(measured, key), tflops(torch_run, key)
        print(f"| {' | '.join(key)} | {shape['m']} | {shape['n']} | {shape['k']} | {cell(h, 1)} | "
              f"{cell(m, 1)} | {cell(t, 1)} | {cell(ratio(m, h), 2)} | {cell(ratio(m, t), 2)} | "
              f"{fused_cell(heuristic, measured, key)} |")
    print()
    print("Plans (kernels/cuda/gemm.h CountGemmPlans):")
    print(plans_line("heuristic", heuristic_plans))
    print(plans_line("measured", measured_plans))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    torch_parser = commands.add_parser("torch", help="time PyTorch's products (JSON lines)")
    torch_parser.add_argument("--tokens", type=int, default=8192)
    torch_parser.add_argument("--dtype", choices=["f16", "bf16"], default="f16")
    torch_parser.add_argument("--repeats", type=int, default=20)
    torch_parser.add_argument("--warmup", type=int, default=3)
    table_parser = commands.add_parser("table", help="the markdown table of three runs")
    for run in ("heuristic", "measured", "torch"):
        table_parser.add_argument(f"--{run}", required=True, help=f"{run} run's JSON lines")
    args = parser.parse_args()
    if args.command == "torch":
        if min(args.tokens, args.repeats, args.warmup) < 1:
            parser.error("--tokens, --repeats and --warmup must be at least 1")
        return run_torch(args)
    return run_table(args)


if __name__ == "__main__":
    sys.exit(main())
