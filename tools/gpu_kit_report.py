#!/usr/bin/env python3
"""Writes summary.md and results.json for one `tools/gpu_verify.sh device` run.

usage: gpu_kit_report.py --work=DIR --out=DIR --bundle=DIR --mode=short|long

Reads what the device mode left in its work folder, whatever finished: host/ (nvidia-smi,
tools/cuda_versions' JSON, the Python versions), parts/NAME.json (exit code, seconds and limit
of each part; 124 or 137 means its time limit stopped it), tests.md (a row per GPU test binary,
written as each one ends), e2e.md (the comparisons of tools/gpu_verify_summary.py), features.md
(those of tools/gpu_features_summary.py), gemm/ (the GEMM benchmark's table gpu_gemm.md and the
JSON lines of its three runs), attention/ (the attention benchmark's table gpu_attention.md and
the JSON lines of its four runs: ours and torch's, f16 and bf16) and the benchmark's
gpu_bench.md and runs.jsonl (under bench/, or the benchmark's own work folder when its time
limit stopped it before it copied them). A part that never wrote its report is reported as
such; nothing here fails because a part did.

Exit status: 0 when every part that should have run passed, 1 otherwise.
"""
import argparse
import glob
import json
import os
import re
import sys

PARTS = {"short": ["tests", "e2e", "features", "gemm", "attention", "bench"], "long": ["long"]}
GEMM_RUNS = ["heuristic", "measured", "torch"]
ATTENTION_RUNS = ["ours_f16", "torch_f16", "ours_bf16", "torch_bf16"]
TIMED_OUT = {124, 137}


def read_text(path, default=""):
    try:
        with open(path, errors="replace") as handle:
            return handle.read()
    except OSError:
        return default


def read_json(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        return {"error": f"{os.path.basename(path)}: {error}"}


def part_outcome(work, name):
    record = read_json(os.path.join(work, "parts", name + ".json"))
    if "exit_code" not in record:
        return {"status": "not run", **record}
    code = record["exit_code"]
    status = "passed" if code == 0 else "timed out" if code in TIMED_OUT else "failed"
    return {"status": status, **record}


def table_rows(markdown):
    """The body rows of the first markdown table in `markdown`, as lists of cells."""
    rows = []
    for line in markdown.splitlines():
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", cell) for cell in cells):
            continue
        rows.append(cells)
    return rows[1:]  # the header row dropped


def bench_files(work, mode_dir):
    """gpu_bench.md and runs.jsonl of the benchmark, from its output or its work folder."""
    out_dir = os.path.join(work, mode_dir)
    table = read_text(os.path.join(out_dir, "gpu_bench.md"))
    runs_path = os.path.join(out_dir, "runs.jsonl")
    if not os.path.exists(runs_path):
        partial = sorted(glob.glob(os.path.join(work, "tmp", "gpu_bench.*", "runs.jsonl")))
        runs_path = partial[-1] if partial else runs_path
    runs = []
    for line in read_text(runs_path).splitlines():
        try:
            runs.append(json.loads(line))
        except ValueError:
            pass
    return table, runs


def json_lines(path):
    """The JSON objects of a JSON-lines file, skipping lines that are not (a run cut short)."""
    records = []
    for line in read_text(path).splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            pass
    return records


def host_summary(work):
    gpus = read_text(os.path.join(work, "host", "gpus.csv")).strip()
    versions = read_json(os.path.join(work, "host", "cuda_versions.json"))
    if "error" in versions and "cuda_runtime" not in versions:
        versions["log"] = read_text(os.path.join(work, "host", "cuda_versions.log")).strip()[-500:]
    python = read_text(os.path.join(work, "host", "python.txt")).strip().splitlines()
    return {"nvidia_smi": gpus, "cuda": versions, "python": python[-1] if python else ""}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--mode", choices=sorted(PARTS), required=True)
    args = parser.parse_args()
    work = args.work

    host = host_summary(work)
    parts = {name: part_outcome(work, name) for name in PARTS[args.mode]}
    tests_md = read_text(os.path.join(work, "tests.md"))
    e2e_md = read_text(os.path.join(work, "e2e.md"))
    bench_md, bench_runs = bench_files(work, "bench")
    gemm_md = read_text(os.path.join(work, "gemm", "gpu_gemm.md"))
    gemm = {run: json_lines(os.path.join(work, "gemm", f"gemm_{run}.jsonl")) for run in GEMM_RUNS}
    attention_md = read_text(os.path.join(work, "attention", "gpu_attention.md"))
    attention = {run: json_lines(os.path.join(work, "attention", f"attention_{run}.jsonl"))
                 for run in ATTENTION_RUNS}
    tests = [{"binary": r[0], "result": r[1], "seconds": r[2]} for r in table_rows(tests_md) if len(r) == 3]
    e2e = [{"comparison": r[0], "measured": r[1], "bound": r[2], "result": r[3]}
           for r in table_rows(e2e_md) if len(r) == 4]
    features_md = read_text(os.path.join(work, "features.md"))
    features = [{"run": r[0], "comparison": r[1], "measured": r[2], "bound": r[3], "result": r[4]}
                for r in table_rows(features_md) if len(r) == 5 and r[4]]
    passed = all(p["status"] == "passed" for p in parts.values())
    results = {
        "mode": args.mode,
        "passed": passed,
        "bundle": read_text(os.path.join(args.bundle, "BUNDLE_INFO")).strip().splitlines(),
        "host": host,
        "parts": parts,
        "tests": tests,
        "e2e": e2e,
        "features": features,
        "bench": bench_runs,
        "gemm": gemm if "gemm" in parts else {},
        "attention": attention if "attention" in parts else {},
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as handle:
        json.dump(results, handle, indent=1)

    cuda = host["cuda"]
    lines = [f"# GPU kit ({args.mode}): {'all parts passed' if passed else 'NOT all parts passed'}", ""]
    lines.append(f"- GPU (name, driver, memory, compute capability): {host['nvidia_smi'] or 'nvidia-smi gave nothing'}")
    devices = ", ".join(d.get("name", "?") for d in cuda.get("devices", [])) or "none visible"
    lines.append(f"- CUDA: driver API {cuda.get('cuda_driver_api', '?')}, runtime {cuda.get('cuda_runtime', '?')}, "
                 f"cuBLASLt {cuda.get('cublaslt', '?')}, NCCL {cuda.get('nccl', '?')}; devices: {devices}"
                 + (f"; error: {cuda['error']}" if "error" in cuda else ""))
    lines.append(f"- {host['python'] or 'python: no torch/transformers version read'}")
    lines += [f"- kit {line}" for line in results["bundle"]]
    lines += ["", "| part | result | exit | seconds | limit |", "|---|---|---:|---:|---:|"]
    for name, p in parts.items():
        lines.append(f"| {name} | {p['status']} | {p.get('exit_code', '')} | {p.get('seconds', '')} | "
                     f"{p.get('limit_seconds', '')} |")
    if "tests" in parts:
        lines += ["", "## GPU tests (XLMR_REQUIRE_GPU=1)", ""]
        lines.append(tests_md.split("\n", 1)[1] if tests_md else "tests.md was not written: see logs.tar.gz, tests.out")
    if "e2e" in parts:
        lines += ["", "## End to end", ""]
        lines.append(e2e_md.split("\n", 1)[1] if e2e_md else "e2e.md was not written: see logs.tar.gz, e2e.out")
    if "features" in parts:
        lines += ["", "## Features, GPU against the CPU oracle (tools/gpu_features.sh)", ""]
        lines.append(features_md or "features.md was not written: see logs.tar.gz, features.out and features/")
    if "gemm" in parts:
        lines += ["", "## GEMMs at the model's Linear shapes (bench/gpu_gemm_bench)", ""]
        lines.append(gemm_md.split("\n", 1)[1].lstrip("\n") if gemm_md
                     else "gpu_gemm.md was not written: see logs.tar.gz, gemm.out and gemm/")
    if "attention" in parts:
        lines += ["", "## Fused attention against PyTorch's SDPA backends (bench/gpu_attention_bench)",
                  ""]
        lines.append(attention_md.split("\n", 1)[1].lstrip("\n") if attention_md
                     else "gpu_attention.md was not written: see logs.tar.gz, attention.out and "
                          "attention/")
    lines += ["", "## Benchmark", ""]
    if bench_md:
        lines.append(bench_md)
    else:
        lines.append(f"gpu_bench.md was not written ({len(bench_runs)} runs recorded in results.json); "
                     "see logs.tar.gz")
    with open(os.path.join(args.out, "summary.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
