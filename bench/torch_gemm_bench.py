#!/usr/bin/env python3
"""torch_gemm_bench: PyTorch's matmul at bench/gemm_bench.cc's shapes, the reference of issue 41.

Same cases, same table layout (GFLOP/s = 2*m*n*k*batch / median time of --repeats calls after
--warmup): the Linear products as torch computes them for a [T, in] input and a [out, in]
weight (forward x @ w.T, input gradient dy @ w, weight gradient dw += dy.T @ x, as addmm_ with
beta 1), attention's per-head products on [batch, heads, L, 64] views of [batch, L, hidden]
tensors (as Hugging Face's eager attention), and the large square product. Each result is
checked against float64 (max |c - ref| / max |ref|). Threads: torch.set_num_threads(--threads).

  python3 bench/torch_gemm_bench.py --threads=2
"""
import argparse
import statistics
import time

import torch


def linear_cases(prefix, tokens, n_in, n_out):
    shape = f"{prefix} {n_in}->{n_out} T={tokens}"
    x, w, dy = (tokens, n_in), (n_out, n_in), (tokens, n_out)
    dw = (n_out, n_in)
    return [
        # name, m, n, k, batch, operand shapes, fn(operands) -> result
        (f"{shape} fwd", tokens, n_out, n_in, 1, [x, w], lambda x, w: x @ w.t()),
        (f"{shape} dgrad", tokens, n_in, n_out, 1, [dy, w], lambda dy, w: dy @ w),
        (f"{shape} wgrad", n_out, n_in, tokens, 1, [dy, x, dw],
         lambda dy, x, dw: dw.addmm_(dy.t(), x)),
    ]


def attention_cases(batch, seq, hidden, head_dim):
    heads = hidden // head_dim
    shape = f"attn L={seq} x{batch * heads} heads"

    def split(t):  # [batch, L, hidden] -> [batch, heads, L, d] view, as HF's eager attention
        return t.view(batch, seq, heads, head_dim).transpose(1, 2)

    qkv = (batch, seq, hidden)
    probs = (batch, heads, seq, seq)
    return [
        (f"{shape} q k^T", seq, seq, head_dim, batch * heads, [qkv, qkv],
         lambda q, k: split(q) @ split(k).transpose(-1, -2)),
        (f"{shape} p v", seq, head_dim, seq, batch * heads, [probs, qkv],
         lambda p, v: p @ split(v)),
    ]


def cases(quick):
    if quick:
        return (linear_cases("tiny", 96, 64, 256) + linear_cases("tiny", 96, 256, 64)
                + attention_cases(2, 32, 64, 16)
                + [("square 256", 256, 256, 256, 1, [(256, 256)] * 2, lambda a, b: a @ b)])
    out = []
    for tokens in (1024, 4096):
        for prefix, hidden in (("base", 768), ("large", 1024)):
            out += linear_cases(prefix, tokens, hidden, hidden)
            out += linear_cases(prefix, tokens, hidden, 4 * hidden)
            out += linear_cases(prefix, tokens, 4 * hidden, hidden)
    out += attention_cases(8, 128, 768, 64) + attention_cases(2, 512, 768, 64)
    out.append(("square 4096", 4096, 4096, 4096, 1, [(4096, 4096)] * 2, lambda a, b: a @ b))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--quick", action="store_true",
                        help="tiny shapes, few repeats: a smoke test, not a measurement")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.warmup = 3, 1
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    print(f"threads: {torch.get_num_threads()}" + (
        " (--quick: tiny shapes, not a measurement)" if args.quick else "") + "\n")
    print(f"- PyTorch {torch.__version__}: CPU capability {torch.backends.cpu.get_cpu_capability()}"
          f"; MKL {torch.backends.mkl.is_available()}, oneDNN {torch.backends.mkldnn.is_available()}"
          "\n")
    print(f"GFLOP/s (median of {args.repeats} after {args.warmup} warm-up); max rel err: "
          "max|c - c_float64| / max|c_float64|\n")
    print("| case | m | n | k | batch | torch | max rel err |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    all_pass = True
    for name, m, n, k, batch, shapes, fn in cases(args.quick):
        operands = [torch.rand(s) * 2 - 1 for s in shapes]
        reference = fn(*[t.double() for t in operands])
        result = fn(*[t.clone() for t in operands])
        err = ((result.double() - reference).abs().max() / reference.abs().max()).item()
        for _ in range(args.warmup):
            fn(*operands)
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            fn(*operands)
            seconds.append(time.perf_counter() - start)
        gflops = 2.0 * m * n * k * batch / statistics.median(seconds) / 1e9
        ok = err <= args.tolerance
        all_pass = all_pass and ok
        print(f"| {name} | {m} | {n} | {k} | {batch} | {gflops:.1f} | {err:.1e}"
              f"{'' if ok else ' FAILED'} |", flush=True)
    print(f"\ncheck: {'pass' if all_pass else 'FAILED'} (tolerance {args.tolerance:.0e})")
    return 0 if all_pass else 1


if __name__ == "__main__":
    raise SystemExit(main())
