#!/usr/bin/env python3
"""PyTorch's SDPA backends at bench/gpu_attention_bench.cc's shapes, and the table against ours.

  python3 bench/gpu_attention_bench.py torch [--dtype=f16|bf16] [--dropout=0.1] [--repeats=20]
                                             [--warmup=3]
  python3 bench/gpu_attention_bench.py table FILE.jsonl...

torch: for XLM-R base (12 heads) and large (16 heads), head_dim 64, at seq 512 batch 16 and seq
128 batch 64, torch.nn.functional.scaled_dot_product_attention on q, k, v [B, heads, S, 64]
(requires_grad, uniform [-2, 2) as gpu_attention_bench's, no mask: every token real) with
dropout_p --dropout, under each backend alone (torch.nn.attention.sdpa_kernel([SDPBackend.X])
for X in FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH), timed on CUDA as
gpu_attention_bench does (--warmup untimed calls, then the mean of --repeats calls between two
CUDA events):
  fwd      out = sdpa(q, k, v) in grad mode (what it saves for the backward included)
  bwd      out.backward(grad) of ONE forward (retain_graph, so that it can be repeated)
  fwd_bwd  a forward, then its backward
with q.grad, k.grad and v.grad cleared before each backward, so that no call adds into the
previous one's gradients (ours returns new tensors too). TFLOP/s as gpu_attention_bench counts
them (forward 4*B*H*S*S*D, backward 2.5x). One JSON object per shape and backend on stdout, with
gpu_attention_bench's keys, impl "torch-<backend>" (torch-flash_attention, ..., torch-math) and
"available"; a backend that raises for the shape or dtype is recorded as unavailable, its times
null and "error" holding what torch said (the exception and its warnings), and the run goes on.

table: a markdown table per dtype (and dropout): ours forward + backward against the fastest
torch backend, their time ratio and every backend's time, then whether the goal (ours within
1.25x of the fastest backend's time at seq 512) is met for each size. The expected shapes and
dtypes always get a row (a run that failed in the GPU kit leaves its figures blank); a missing
file is skipped. Needs no torch.
"""
import argparse
import json
import sys

import cuda_event_timing
import warnings

HEAD_DIM = 64
# (size, hidden, heads, seq, batch): gpu_attention_bench.cc's shapes, in its order.
SHAPES = [("base", 768, 12, 512, 16), ("base", 768, 12, 128, 64),
          ("large", 1024, 16, 512, 16), ("large", 1024, 16, 128, 64)]
DTYPES = ["f16", "bf16"]
BACKENDS = ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"]
GOAL_RATIO, GOAL_SEQ = 1.25, 512


def forward_flops(batch, heads, seq):
    """FlashAttention's count of the forward: QK^T and PV, two FLOPs per multiply-add."""
    return 4.0 * batch * heads * seq * seq * HEAD_DIM


def torch_impl(backend):
    return "torch-" + backend.lower()


def one_line(error, caught):
    """The exception's first line and the distinct warnings torch gave with it, shortened."""
    parts = [str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__]
    for warning in caught:
        text = " ".join(str(warning.message).split())
        if text and text not in parts:
            parts.append(text)
    return "; ".join(parts)[:600]


def run_torch(args):
    try:
        import torch  # here, so that `table` runs where torch is not installed
    except ImportError as error:
        sys.exit(f"gpu_attention_bench.py torch: cannot import torch: {error}")

    if not torch.cuda.is_available():
        sys.exit(f"gpu_attention_bench.py torch: torch {torch.__version__} sees no CUDA device")
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as error:
        sys.exit(f"gpu_attention_bench.py torch: torch {torch.__version__} has no sdpa_kernel "
                 f"({error})")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]

    def mean_ms(work):
        return cuda_event_timing.mean_ms(work, args.warmup, args.repeats)

    def timings(q, k, v, grad):
        def clear():
            q.grad = k.grad = v.grad = None

        def forward():
            return sdpa(q, k, v, dropout_p=args.dropout)

        def forward_backward():
            clear()
            forward().backward(grad)

        fwd_ms = mean_ms(forward)
        saved = forward()
        bwd_ms = mean_ms(lambda: (clear(), saved.backward(grad, retain_graph=True)))
        return fwd_ms, bwd_ms, mean_ms(forward_backward)

    def measure(backend_name, q, k, v, grad):
        backend = getattr(SDPBackend, backend_name, None)
        if backend is None:
            return {"available": False,
                    "error": f"torch {torch.__version__} has no SDPBackend.{backend_name}"}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with sdpa_kernel([backend]):
                    fwd_ms, bwd_ms, fwd_bwd_ms = timings(q, k, v, grad)
            except Exception as error:  # any refusal of this backend; the others still run
                return {"available": False, "error": one_line(error, caught)}
        return {"available": True, "fwd_ms": fwd_ms, "bwd_ms": bwd_ms, "fwd_bwd_ms": fwd_bwd_ms}

    torch.manual_seed(42)
    for size, _, heads, seq, batch in SHAPES:
        def uniform():  # as gpu_attention_bench's inputs
            return torch.empty(batch, heads, seq, HEAD_DIM, device="cuda", dtype=dtype).uniform_(-2, 2)

        q, k, v = (uniform().requires_grad_() for _ in range(3))
        grad = uniform()
        for backend_name in BACKENDS:
            record = {"size": size, "batch": batch, "seq": seq, "heads": heads, "dtype": args.dtype,
                      "dropout": args.dropout, "impl": torch_impl(backend_name),
                      "fwd_ms": None, "bwd_ms": None, "fwd_bwd_ms": None, "fwd_bwd_tflops": None}
            record.update(measure(backend_name, q, k, v, grad))
            if record["available"]:
                flops = 3.5 * forward_flops(batch, heads, seq)
                record["fwd_bwd_tflops"] = flops / record["fwd_bwd_ms"] / 1e9
            print(json.dumps(record), flush=True)
    return 0


def read_records(paths):
    """The records of the JSON-lines files, and notes on lines that were not JSON (a cut run)."""
    records, notes = [], []
    for path in paths:
        try:
            with open(path) as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                notes.append(f"- {path}:{number}: not JSON, skipped: {line[:80]}")
    return records, notes


def ms_cell(record):
    if record is None:
        return ""
    if record.get("available") is False or record.get("fwd_bwd_ms") is None:
        return "n/a"
    return f"{record['fwd_bwd_ms']:.3f}"


def fastest_torch(by_impl):
    """(backend name, ms) of the fastest torch backend that ran, or (None, None)."""
    times = [(by_impl[torch_impl(b)]["fwd_bwd_ms"], b.lower()) for b in BACKENDS
             if by_impl.get(torch_impl(b), {}).get("fwd_bwd_ms") is not None]
    if not times:
        return None, None
    ms, name = min(times)
    return name, ms


def goal_line(size, dtype, by_impl):
    ours = (by_impl.get("ours") or {}).get("fwd_bwd_ms")
    name, fastest = fastest_torch(by_impl)
    where = f"- {size} {dtype}, seq {GOAL_SEQ}: goal"
    if ours is None:
        return f"{where} unknown (no figure of ours)"
    if fastest is None:
        return f"{where} unknown (no torch backend ran)"
    ratio = ours / fastest
    verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
    return f"{where} {verdict} (ours {ratio:.2f}x {name}; goal <= {GOAL_RATIO}x)"


def print_group(dtype, dropout, rows, records):
    """One dtype's (and dropout's) table, its goal lines and the backends that did not run."""
    print(f"### {dtype}, dropout {dropout}" if dropout is not None else f"### {dtype}: no results")
    print()
    backend_columns = " | ".join(f"{b.lower()} ms" for b in BACKENDS)
    print("| size | batch | seq | ours fwd+bwd ms | fastest torch backend | its ms | ours/fastest | "
          f"{backend_columns} |")
    print("|---|---:|---:|---:|---|---:|---:|" + "---:|" * len(BACKENDS))
    goals, refusals = [], {}
    for size, batch, seq in rows:
        by_impl = {r["impl"]: r for r in records
                   if (r["size"], r["batch"], r["seq"]) == (size, batch, seq)}
        name, fastest = fastest_torch(by_impl)
        ours = (by_impl.get("ours") or {}).get("fwd_bwd_ms")
        ratio = f"{ours / fastest:.2f}" if ours is not None and fastest else ""
        cells = [ms_cell(by_impl.get(torch_impl(b))) for b in BACKENDS]
        print(f"| {size} | {batch} | {seq} | {ms_cell(by_impl.get('ours'))} | {name or ''} | "
              f"{'' if fastest is None else f'{fastest:.3f}'} | {ratio} | {' | '.join(cells)} |")
        if seq == GOAL_SEQ:
            goals.append(goal_line(size, dtype, by_impl))
        for b in BACKENDS:
            record = by_impl.get(torch_impl(b))
            if record and record.get("available") is False:
                refusals.setdefault(b.lower(),
                                    f"{size} batch {batch} seq {seq}: {record.get('error', '')}")
    print()
    print(f"Goal: ours forward + backward within {GOAL_RATIO}x of the fastest torch backend "
          f"at seq {GOAL_SEQ}.")
    print("\n".join(goals))
    for name, first in refusals.items():
        print(f"- {name} did not run (first refusal, {first[:300]})")
    print()


def run_table(args):
    records, notes = read_records(args.files)
    print("Fused attention forward + backward, head_dim 64, every key real: ours "
          "(bench/gpu_attention_bench) against PyTorch's scaled_dot_product_attention, each "
          "backend alone; mean ms per call (n/a: the backend refused the shape or dtype).")
    print()
    groups = list(dict.fromkeys((r["dtype"], r["dropout"]) for r in records))
    groups += [(dtype, None) for dtype in DTYPES if dtype not in {g[0] for g in groups}]
    groups.sort(key=lambda g: (DTYPES.index(g[0]) if g[0] in DTYPES else len(DTYPES), g[0],
                               g[1] or 0))
    for dtype, dropout in groups:
        group = [r for r in records if (r["dtype"], r["dropout"]) == (dtype, dropout)]
        rows = list(dict.fromkeys([(s, b, q) for s, _, _, q, b in SHAPES] +
                                  [(r["size"], r["batch"], r["seq"]) for r in group]))
        print_group(dtype, dropout, rows, group)
    if notes:
        print("\n".join(notes))
    return 0


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line naming the (sub)command, and exit status 2 (argparse's status)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def main():
    parser = OneLineParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    torch_parser = commands.add_parser("torch", help="time PyTorch's SDPA backends (JSON lines)")
    torch_parser.add_argument("--dtype", choices=DTYPES, default="f16")
    torch_parser.add_argument("--dropout", type=float, default=0.1)
    torch_parser.add_argument("--repeats", type=int, default=20)
    torch_parser.add_argument("--warmup", type=int, default=3)
    table_parser = commands.add_parser("table", help="the markdown tables of ours and torch's runs")
    table_parser.add_argument("files", nargs="+",
                              help="JSON-lines files of gpu_attention_bench and of `torch`")
    args = parser.parse_args()
    if args.command == "torch":
        if min(args.repeats, args.warmup) < 1:
            torch_parser.error("--repeats and --warmup must be at least 1")
        if not 0 <= args.dropout < 1:  # NaN fails too
            torch_parser.error(f"--dropout={args.dropout}: must be in [0, 1)")
        return run_torch(args)
    return run_table(args)


if __name__ == "__main__":
    sys.exit(main())
