#!/usr/bin/env bash
# xlmr_finetune --task=cross_encoder against sentence-transformers' CrossEncoderTrainer, end to
# end, on one short run with a partial last batch: tests/golden/ce_trainer_run/, made by
# tests/golden/make_ce_trainer_run.py (its docstring states the run: the tiny RoBERTa as a
# CrossEncoder, RobertaForSequenceClassification with one label, dropout off, 10 (query, passage,
# label) rows with labels 0, 1 and 0.5 at batch 4 in xlmr_finetune's visiting order, steps of 4,
# 4 and 2 rows, pairs tokenized <s> query </s></s> passage </s> and cut to 128 tokens
# longest_first (row 9's 152 tokens), BinaryCrossEntropyLoss, AdamW lr 1e-3 eps 1e-4, linear
# decay, clipping at 100 never reached). The same run here through the binary. Checked:
#   - each step's rows (4 8 10 cumulative) and loss within 1e-5 relative of sentence-transformers'
#     (the fp32 parity bound of losses; measured 1.9e-7); a batch of other rows, the pair swapped
#     (passage first: 27% at step 1), row 9 cut otherwise (at 120 tokens: 3.8e-3 at step 1), or a
#     partial batch's mean taken over the nominal 4 (half of step 3's) would differ by far more;
#   - each step's grad_norm within 1e-4 relative (measured 1.3e-6) and learning rate within 1e-9
#     (arithmetic on the step count; the table's 9 digits alone put step 3 at 1.0e-9, as in
#     st_steps.tsv);
#   - the final evaluation's eval_loss (the 10 rows in file order, batches of 4: the mean of the
#     rows' BCE, trainer.evaluate() weighting each batch's mean by its rows) within 1e-5 relative
#     of sentence-transformers' (fp32 sums in other orders; measured 3.0e-7);
#   - the weights after step 3 against sentence-transformers': max |difference| <= 3e-6, the
#     sentence-embedding run's bound (st_trainer_parity_test.sh); measured 7.9e-7, at a key bias
#     of layer 1 (whose gradient is rounding noise), so kept;
#   - xlmr_predict on the saved directory: one {"index": i, "score": s} line per row, in file
#     order, s the sigmoid of the logit, within 1e-5 absolute of CrossEncoder.predict() with
#     sentence-transformers' trained model (scores.tsv; probabilities in (0, 1) from two
#     trainings' weights, fp32 sums in other orders; measured 5.2e-7);
#   - the saved directory is a sentence-transformers CrossEncoder: config.json names
#     RobertaForSequenceClassification with one label, and config_sentence_transformers.json
#     (model_type "CrossEncoder"; an activation_fn, if named, the sigmoid xlmr_predict applies, so
#     CrossEncoder.predict() on our directory gives the same scores), both in manifest.json, and no
#     modules.json (a plain directory loads in every sentence-transformers release:
#     recipes/cross_encoder_files.h; tests/golden/ce_trainer_run/st_files/ holds what
#     CrossEncoder.save_pretrained of 6.2 writes, for comparison by eye).
# Only python3's standard library is used (no numpy or torch in CI).
# Args: xlmr_finetune, xlmr_predict, compare_models, ce_trainer_run/ce_steps.tsv.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
compare=$(absolute "$3")
golden=$(dirname "$(absolute "$4")")
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/step_table.sh"

rm -rf ours
if ! "$finetune" --task=cross_encoder --model_dir="$golden/start_model" --train_file="$golden/train.jsonl" \
  --text_column=query --text_pair_column=passage --label_column=label --dropout=0 --learning_rate=1e-3 \
  --adam_epsilon=1e-4 --weight_decay=0 --lr_scheduler_type=linear --warmup_steps=0 --max_grad_norm=100 \
  --per_device_train_batch_size=4 --max_steps=3 --seed=42 --logging_steps=1 --save_strategy=no \
  --eval_file="$golden/train.jsonl" --per_device_eval_batch_size=4 --eval_strategy=no \
  --cache_dir=cache --output_dir=ours > ours.log 2>&1; then
  cat ours.log
  echo "FAILED: the run"
  exit 1
fi

[ "$(step_field examples | tr '\n' ' ')" = "4 8 10 " ] || fail "rows $(step_field examples | tr '\n' ' '), expected 4 8 10"
check_steps "$golden/ce_steps.tsv" loss 3 1e-5 3
check_steps "$golden/ce_steps.tsv" grad_norm 4 1e-4 3
check_steps "$golden/ce_steps.tsv" lr 5 1e-9 3

python3 - ours/eval_results.json "$golden/ce_eval.tsv" <<'PY' || fail "the final evaluation's eval_loss differs"
import json, sys
ours = json.load(open(sys.argv[1]))
reference = dict(line.split("\t") for line in open(sys.argv[2]).read().splitlines())
value = float(reference["eval_loss"])
ok = isinstance(ours.get("eval_loss"), (int, float)) and abs(ours["eval_loss"] - value) <= 1e-5 * abs(value)
print(f"  eval_loss: ours {ours.get('eval_loss')}, reference {value!r} (tolerance 1e-5 relative)"
      f"{'' if ok else '  FAILED'}")
sys.exit(not ok)
PY

echo -n "weights after step 3 vs sentence-transformers': "
"$compare" ours/model.safetensors "$golden/model.safetensors" --tolerance=3e-6 || fail "the weights differ"

if "$predict" --model_dir=ours --input_file="$golden/train.jsonl" --output_file=scores.jsonl > predict.log 2>&1; then
  python3 - scores.jsonl "$golden/scores.tsv" <<'PY' || fail "the scores differ from CrossEncoder.predict()'s"
import json, sys
ours = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8").read().splitlines()]
theirs = [float(line) for line in open(sys.argv[2]).read().splitlines()]
assert len(theirs) == 10, theirs
if [row.get("index") for row in ours] != list(range(len(theirs))):
    sys.exit(f"  not one line per row in file order: {ours}")
worst = 0.0
for i, (row, reference) in enumerate(zip(ours, theirs)):
    difference = abs(row["score"] - reference)
    worst = max(worst, difference)
    print(f"  row {i} score: ours {row['score']}, reference {reference!r}, difference {difference:.3g}")
print(f"scores vs CrossEncoder.predict(): worst {worst:.3g} (tolerance 1e-5 absolute)")
sys.exit(worst > 1e-5)
PY
else
  cat predict.log
  fail "xlmr_predict"
fi

# The saved directory: a transformers model with one label and a sentence-transformers CrossEncoder.
python3 - ours <<'PY' || fail "the saved directory is not a one-label sentence-transformers CrossEncoder"
import json, os, sys
directory = sys.argv[1]
failed = []
def load(name):
    try:
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        failed.append(f"{name}: {error}")
        return None
config = load("config.json")
if config is not None:
    if config.get("architectures") != ["RobertaForSequenceClassification"]:
        failed.append(f"config.json: architectures {config.get('architectures')}")
    if len(config.get("id2label", {})) != 1 or config.get("num_labels", 1) != 1:
        failed.append(f"config.json: not one label: id2label {config.get('id2label')}")
st_config = load("config_sentence_transformers.json")
if st_config is not None:
    if st_config.get("model_type") != "CrossEncoder":
        failed.append(f"config_sentence_transformers.json: model_type {st_config.get('model_type')}")
    if st_config.get("activation_fn", "torch.nn.modules.activation.Sigmoid") != "torch.nn.modules.activation.Sigmoid":
        failed.append(f"config_sentence_transformers.json: activation_fn {st_config.get('activation_fn')}")
if os.path.exists(os.path.join(directory, "modules.json")):
    failed.append("modules.json: written (its module types differ between releases)")
manifest = load("manifest.json")
if manifest is not None:
    listed = {entry.get("name") for entry in manifest.get("files", [])}
    for name in ("config.json", "model.safetensors", "config_sentence_transformers.json"):
        if name not in listed:
            failed.append(f"{name} is not in manifest.json")
for line in failed:
    print(f"  {line}")
sys.exit(bool(failed))
PY

[ "$failures" -eq 0 ] && echo "xlmr_finetune's cross-encoder run matches sentence-transformers' CrossEncoderTrainer"
exit "$failures"
