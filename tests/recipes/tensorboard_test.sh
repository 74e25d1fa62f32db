#!/usr/bin/env bash
# --report_to=tensorboard on the embedded data, 40 steps under --fp16, a log entry every 5 steps,
# evaluations every 10, checkpoints every 20. The event file is read back by
# read_tensorboard.py (TensorBoard's own EventAccumulator when the tensorboard package is
# installed, else an independent protobuf decoder; the script says which). Catches:
#   scalars   a scalar missing at its step or at another step: train/loss, learning_rate,
#             grad_norm, epoch and loss_scale at 5, 10, ..., 40; eval/loss, accuracy and
#             macro_f1 at 10, 20, 30, 40; train/train_loss at 40 (HF's names and steps);
#   values    an event that differs from the log history in output_dir/trainer_state.json
#             (rounded to float32, as TensorBoard stores it); train/loss that is not the mean
#             of metrics.jsonl's losses since the previous entry (HF's tr_loss averaging);
#             train/learning_rate that is not the rate metrics.jsonl says the step used;
#   resume    the same run SIGKILLed after it logged step 25 (its last checkpoint is step 20)
#             and run again: the resumed file must hold each entry once, equal to the
#             uninterrupted run's (a file appended to without being cut back holds steps 25
#             twice), and trainer_state.json the same log history;
#   flags     --report_to=none writes no event file (the log history is kept);
#             --logging_dir puts the file there and not in <output_dir>/runs.
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
reader="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
cd "$TEST_TMPDIR"
common=(--cache_dir=cache --max_steps=40 --logging_steps=5 --eval_steps=10 --save_steps=20 --fp16)
fail() { echo "FAILED: $*"; exit 1; }

# scalars, values
"$finetune" --output_dir=whole --report_to=tensorboard "${common[@]}" 2> whole.log || { cat whole.log; fail "whole run"; }
python3 "$reader" whole/runs > whole.json || fail "reading whole/runs"
echo "read by: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reader"])' whole.json)"
python3 - whole.json whole/trainer_state.json whole/metrics.jsonl <<'PY' || fail "scalars or values of the whole run"
import json, struct, sys
scalars = json.load(open(sys.argv[1]))["scalars"]
history = json.load(open(sys.argv[2]))["log_history"]
lines = [json.loads(l) for l in open(sys.argv[3])]
f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
def steps(tag): return [s for s, _ in scalars.get(tag, [])]
def value(tag, step): return dict((s, v) for s, v in scalars[tag])[step]
logged, evals = list(range(5, 41, 5)), [10, 20, 30, 40]
for tag in ["train/loss", "train/learning_rate", "train/grad_norm", "train/loss_scale"]:
    assert steps(tag) == logged, (tag, steps(tag))
for tag in ["eval/loss", "eval/accuracy", "eval/macro_f1"]:
    assert steps(tag) == evals, (tag, steps(tag))
assert steps("train/train_loss") == [40], steps("train/train_loss")
assert sorted(set(steps("train/epoch"))) == logged, steps("train/epoch")  # one per entry, as HF
# Every entry of the log history is in the file at its step, with its value.
for entry in history:
    for key, v in entry.items():
        if key == "step": continue
        tag = "eval/" + key[5:] if key.startswith("eval_") else "train/" + key
        assert [entry["step"], f32(v)] in scalars[tag], (tag, entry)
train = {l["step"]: l for l in lines if l["type"] == "train"}
for s in logged:
    mean = sum(train[k]["loss"] for k in range(s - 4, s + 1)) / 5
    assert value("train/loss", s) == f32(mean), (s, value("train/loss", s), mean)
    assert value("train/learning_rate", s) == f32(train[s]["lr"]), s
    assert value("train/loss_scale", s) == f32(train[s]["loss_scale"]), s
print("whole: %d tags, every entry of the log history at its step" % len(scalars))
PY

# resume
"$finetune" --output_dir=killed --report_to=tensorboard "${common[@]}" 2> killed1.log &
pid=$!
while ! grep -q '"type":"train","step":26,' killed/metrics.jsonl 2> /dev/null; do
  kill -0 "$pid" 2> /dev/null || fail "the run ended before step 26"
  sleep 0.01
done
kill -KILL "$pid"; wait "$pid" || true
[ ! -e killed/checkpoint-40 ] || fail "killed too late: checkpoint-40 exists"
python3 "$reader" killed/runs > before.json
python3 -c 'import json,sys; assert 25 in [s for s, _ in json.load(open(sys.argv[1]))["scalars"]["train/loss"]]' before.json \
  || fail "the killed run's file lacks step 25: the test kills too early to see duplicates"
"$finetune" --output_dir=killed --report_to=tensorboard "${common[@]}" 2> killed2.log || { cat killed2.log; fail "rerun"; }
grep -q "Checkpoint detected, resuming training at .*checkpoint-20" killed2.log || { cat killed2.log; fail "no resume from checkpoint-20"; }
grep "dropped .* events written after step 20" killed2.log || { cat killed2.log; fail "no line about the events cut back"; }
python3 "$reader" killed/runs > killed.json
python3 - whole.json killed.json whole/trainer_state.json killed/trainer_state.json <<'PY' || fail "the resumed run's events or log history"
import json, sys
timing = {"train/train_runtime", "train/train_samples_per_second", "train/train_steps_per_second"}
whole, killed = (json.load(open(p))["scalars"] for p in sys.argv[1:3])
assert whole.keys() == killed.keys(), (whole.keys(), killed.keys())
for tag in whole:
    if tag in timing:
        assert [s for s, _ in whole[tag]] == [s for s, _ in killed[tag]], tag
    else:
        assert whole[tag] == killed[tag], (tag, whole[tag], killed[tag])
strip = lambda h: [{k: v for k, v in e.items() if "train/" + k not in timing} for e in h]
a, b = (strip(json.load(open(p))["log_history"]) for p in sys.argv[3:5])
assert a == b, (a, b)
print("resumed: every tag's events equal the uninterrupted run's, each once; log_history equal")
PY

# flags
"$finetune" --output_dir=none "${common[@]}" --max_steps=5 2> none.log || { cat none.log; fail "--report_to=none run"; }
[ ! -e none/runs ] || fail "--report_to=none wrote none/runs"
python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["log_history"]) == 3' none/trainer_state.json \
  || fail "--report_to=none: trainer_state.json's log_history is not [train, eval, end]"
"$finetune" --output_dir=elsewhere --report_to=tensorboard --logging_dir=tb "${common[@]}" --max_steps=5 2> elsewhere.log \
  || { cat elsewhere.log; fail "--logging_dir run"; }
[ -s tb/events.out.tfevents.xlmr_trainer ] && [ ! -e elsewhere/runs ] || fail "--logging_dir=tb: file not in tb only"
echo "flags: --report_to=none writes no events; --logging_dir is honoured"
