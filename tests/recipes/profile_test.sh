#!/usr/bin/env bash
# --profile_steps end to end, through both binaries on the embedded default (a 2-layer XLM-R
# shaped model; the test reads its layer count from the saved config.json):
#   - xlmr_finetune --profile_steps=3:5 writes out/profile/{trace.json,op_classes.md,op_classes.json};
#     trace.json is Chrome trace JSON (checked field by field as the Trace Event Format defines
#     complete "X" and metadata "M" events), holds exactly the steps 3, 4 and 5, every op inside a
#     step of its thread, and the model's scopes by name (layer.<i>.attention.fwd, ... for every
#     layer i, a set the test builds from config.json);
#   - each step holds 2 x (6L + 2) ops::Linear/LinearBackward calls, counted by the test from the
#     architecture (per layer: query, key, value, attention output, intermediate, output; the
#     classification head's dense and out_proj), forward and backward;
#   - the per-class times of op_classes.json add up to the steps' time measured by the trainer's
#     own clock (metrics.jsonl step_seconds) within 5% (the issue's bound; measured 0.02%);
#   - metrics.jsonl's kernel_launches of a profiled step is the number of backend calls the trace
#     shows for it, and host_waits is 0 on the CPU;
#   - a window past the run's end writes what ran of it; xlmr_predict profiles its batches;
#   - a malformed --profile_steps stops either binary before any work: exit 2, one stderr line.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
cd "$TEST_TMPDIR"
common=(--cache_dir=cache --eval_strategy=no --save_strategy=no --logging_steps=1 --device=cpu)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

"$finetune" "${common[@]}" --output_dir=out --max_steps=6 --profile_steps=3:5 2> train.log ||
  { cat train.log; exit 1; }
[ -f out/profile/trace.json ] && [ -f out/profile/op_classes.md ] && [ -f out/profile/op_classes.json ] ||
  fail "out/profile lacks trace.json, op_classes.md or op_classes.json: $(ls out/profile 2>&1)"

check_profile() {  # PROFILE_DIR METRICS_FILE FIRST LAST BACKWARD(1|0) CONFIG
  python3 - "$@" <<'PY'
import json, math, sys
profile, metrics_path, first, last, backward, config_path = sys.argv[1:]
first, last, backward = int(first), int(last), backward == "1"
errors = []
trace = json.load(open(profile + "/trace.json"))
layers = json.load(open(config_path))["num_hidden_layers"]

# The Trace Event Format: an object with traceEvents; X events carry name, cat, ph, ts, dur,
# pid, tid; M events name processes and threads.
events = trace.get("traceEvents")
if not isinstance(events, list) or not events:
    sys.exit("trace.json: no traceEvents list")
for e in events:
    if e.get("ph") == "M":
        if e.get("name") not in ("process_name", "thread_name") or "name" not in e.get("args", {}):
            errors.append(f"bad metadata event {e}")
        continue
    ok = (e.get("ph") == "X" and isinstance(e.get("name"), str) and isinstance(e.get("cat"), str)
          and isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float))
          and e["dur"] >= 0 and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int))
    if not ok:
        errors.append(f"bad complete event {e}")
complete = [e for e in events if e.get("ph") == "X"]
steps = [e for e in complete if e["cat"] == "step"]
ops = [e for e in complete if e["cat"] not in ("step", "scope")]
scopes = {e["name"] for e in complete if e["cat"] == "scope"}
want_steps = [f"step {n}" for n in range(first, last + 1)]
if sorted(e["name"] for e in steps) != sorted(want_steps):
    errors.append(f"steps {[e['name'] for e in steps]}, expected {want_steps}")

def step_of(op):
    for s in steps:
        if s["tid"] == op["tid"] and s["ts"] <= op["ts"] and op["ts"] + op["dur"] <= s["ts"] + s["dur"] + 1e-3:
            return s["name"]
    return None
by_step = {name: [] for name in want_steps}
for op in ops:
    name = step_of(op)
    if name is None:
        errors.append(f"op {op['name']} at {op['ts']} us is inside no step")
    else:
        by_step[name].append(op)

passes = ["fwd", "bwd"] if backward else ["fwd"]
want_scopes = {f"embeddings.{p}" for p in passes} | {f"head.{p}" for p in passes}
for i in range(layers):
    want_scopes |= {f"layer.{i}"} | {f"layer.{i}.{part}.{p}" for part in ("attention", "ffn") for p in passes}
if scopes != want_scopes:
    errors.append(f"scopes {sorted(scopes ^ want_scopes)} differ (expected {sorted(want_scopes)})")

linears = 6 * layers + 2
for name, step_ops in by_step.items():
    forward = sum(op["name"] == "ops::Linear" for op in step_ops)
    backward_calls = sum(op["name"] == "ops::LinearBackward" for op in step_ops)
    if forward != linears or backward_calls != (linears if backward else 0):
        errors.append(f"{name}: {forward} ops::Linear and {backward_calls} ops::LinearBackward, expected "
                      f"{linears} and {linears if backward else 0}")
    inside_layers = [op for op in step_ops if op["name"] == "ops::Linear" and op["args"]["path"].startswith("layer.")]
    if len(inside_layers) != 6 * layers:
        errors.append(f"{name}: {len(inside_layers)} ops::Linear inside layer scopes, expected {6 * layers}")

summary = json.load(open(profile + "/op_classes.json"))
class_total = sum(row["seconds"] for row in summary["classes"])
if metrics_path != "-":
    lines = [json.loads(l) for l in open(metrics_path) if '"type":"train"' in l]
    measured = sum(l["step_seconds"] for l in lines if first <= l["step"] <= last)
    if abs(class_total - measured) > 0.05 * measured:
        errors.append(f"classes add up to {class_total:.6f} s, the trainer measured {measured:.6f} s")
    print(f"classes {class_total:.6f} s vs step_seconds {measured:.6f} s ({100 * abs(class_total - measured) / measured:.3f}%)")
    for l in lines:
        if not first <= l["step"] <= last:
            continue
        calls = sum(op["cat"] not in ("transfer", "communication") for op in by_step[f"step {l['step']}"])
        if l["kernel_launches"] != calls or l["host_waits"] != 0:
            errors.append(f"step {l['step']}: kernel_launches {l['kernel_launches']} (trace: {calls} backend calls), "
                          f"host_waits {l['host_waits']} (expected 0 on the CPU)")
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
PY
}
check_profile out/profile out/metrics.jsonl 3 5 1 out/config.json || fail "xlmr_finetune --profile_steps=3:5"

# A window the run ends inside: steps 5 and 6 of 6.
"$finetune" "${common[@]}" --output_dir=late --max_steps=6 --profile_steps=5:100 2> late.log || { cat late.log; exit 1; }
check_profile late/profile late/metrics.jsonl 5 6 1 out/config.json || fail "--profile_steps=5:100 in a 6-step run"

# xlmr_predict: its batches 2 and 3, beside --output_file.
mkdir -p predicted
"$predict" --model_dir=out --input_file="$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/test.tsv" \
  --output_file=predicted/out.jsonl --profile_steps=2:3 --device=cpu 2> predict.log || { cat predict.log; exit 1; }
check_profile predicted/profile - 2 3 0 out/config.json || fail "xlmr_predict --profile_steps=2:3"

for bad in 5:3 0:2 3 a:b; do
  for binary in finetune predict; do
    rm -rf bad
    if [ "$binary" = finetune ]; then
      "$finetune" "${common[@]}" --output_dir=bad --profile_steps="$bad" > /dev/null 2> bad.log && status=0 || status=$?
    else
      "$predict" --model_dir=out --input_file=x.tsv --output_file=bad/p.jsonl --profile_steps="$bad" > /dev/null 2> bad.log &&
        status=0 || status=$?
    fi
    if [ "$status" -ne 2 ] || [ "$(wc -l < bad.log)" -ne 1 ] || [ -e bad ] ||
       ! grep -qF -- "--profile_steps: expected START:END with 1 <= START <= END (e.g. 5:7), got $bad" bad.log; then
      fail "xlmr_$binary --profile_steps=$bad: status $status, stderr: $(cat bad.log)"
    fi
  done
done

[ "$failures" -eq 0 ] && echo "PASSED" || exit 1
