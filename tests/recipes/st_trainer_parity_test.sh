#!/usr/bin/env bash
# xlmr_finetune --task=sentence_embedding against sentence-transformers' trainer, end to end, on
# one short run with a partial last batch (issue 43): tests/golden/st_trainer_run/, made by
# tests/golden/make_st_trainer_run.py (its docstring states the run: the tiny RoBERTa as a
# sentence-transformers model with mean pooling, dropout off, 10 (anchor, positive, negative) rows
# at batch 4 in xlmr_finetune's visiting order, steps of 4, 4 and 2 rows,
# MultipleNegativesRankingLoss, AdamW lr 1e-3 eps 1e-4, linear decay, clipping at 100 never
# reached). The same run here through the binary. Checked:
#   - each step's rows (4 8 10 cumulative) and loss: within 1e-5 relative of sentence-transformers'
#     (the fp32 parity bound of losses; measured 2.6e-7); the loss of a batch depends on which rows
#     share it (in-batch negatives), so a batch of other rows, or a partial batch normalised by the
#     nominal 4, would differ by far more;
#   - each step's grad_norm within 1e-4 relative (measured 3.5e-7) and learning rate within 1e-9;
#   - the final evaluation's eval_loss (the 10 rows in file order, batches of 4: each batch's own
#     in-batch negatives) within 1e-5 relative of sentence-transformers' trainer.evaluate()
#     (measured 5.6e-7), and its 15 retrieval figures (anchors against the distinct positives
#     and negatives) equal to InformationRetrievalEvaluator's on sentence-transformers' trained
#     model, double for double (the same ranking of 20 documents for each of 10 queries);
#   - the weights after step 3 against sentence-transformers': max |difference| <= 3e-6 (measured
#     1.8e-6, the key bias, whose gradient is rounding noise), the pooler included: the base model's
#     pooler, never read, must come back as it was loaded;
#   - the saved directory is a sentence-transformers model: modules.json, sentence_bert_config.json,
#     1_Pooling/config.json (mean pooling, width 32), config_sentence_transformers.json, all in
#     manifest.json; config.json names RobertaModel;
#   - the same run with --mini_batch_size=3 (the cached loss, GradCache) against
#     CachedMultipleNegativesRankingLoss's run with mini_batch_size 3 (st_steps_cached.tsv ...),
#     with the same bounds but the weights' at 5e-6 (measured 2.8e-6, a key weight, near the
#     uncached run's 3e-6 bound: each gradient is now also summed over mini-batches; losses
#     4.8e-7, grad norms 7.9e-7, embeddings 4.2e-7), packed and padded;
#   - the same run with --embedding_loss=multiple_negatives_symmetric_ranking against
#     MultipleNegativesRankingLoss with directions query_to_doc and doc_to_query, per_direction
#     (st_steps_symmetric.tsv ...), with the first run's bounds (measured: losses 1.0e-6, grad norms
#     6.6e-7, eval_loss 9.9e-8, weights 1.7e-6, embeddings 4.5e-7);
#   - the same run on 10 scored pairs (train_scored.jsonl: sentence1, sentence2, score, ties
#     included) with --embedding_loss=cosent against CoSENTLoss's run (st_steps_cosent.tsv ...):
#     per-step losses, grad norms and embeddings with the bounds above (measured 2.0e-6, 2.2e-6
#     and 7.5e-7), the weights within 5e-6 (measured 3.3e-6 at a key bias, whose gradient is
#     rounding noise; CoSENT's gradients are 3-5 times the in-batch loss's, and so is the noise),
#     eval_loss (each batch's CoSENT weighted by its rows) within 1e-5 relative (measured 9.8e-7),
#     pearson_cosine within 5e-6 (cosines of two trainings' weights; measured 7.9e-7) and
#     spearman_cosine equal (the same ranks);
#   - xlmr_predict on the saved directory writes the anchors' embeddings as a .npy float32 [10, 32]
#     matrix (read here by its documented layout, no numpy) within 1e-5 of the largest value of
#     encode() with sentence-transformers' trained model (measured 5.6e-7 on the CPU: two
#     different trainings' weights, fp32 sums in other orders).
# Args: xlmr_finetune, xlmr_predict, compare_models, st_trainer_run/st_steps.tsv.
set -euo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
compare=$(absolute "$3")
golden=$(dirname "$(absolute "$4")")
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# run_and_check SUFFIX WEIGHT_TOLERANCE TRAIN_FILE COLUMNS FLAGS...: the run on TRAIN_FILE's
# COLUMNS, held to st_steps$SUFFIX.tsv, model$SUFFIX.safetensors (max |difference| <=
# WEIGHT_TOLERANCE) and anchor_embeddings$SUFFIX.npy (the first column's texts).
run_and_check() {
  local suffix=$1 weight_tolerance=$2 train=$golden/$3 columns=$4; shift 4
  echo "== the run of st_steps$suffix.tsv"
  rm -rf ours
  "$finetune" --task=sentence_embedding --model_dir="$golden/start_model" --train_file="$train" \
    --embedding_columns="$columns" --dropout=0 --learning_rate=1e-3 --adam_epsilon=1e-4 \
    --weight_decay=0 --lr_scheduler_type=linear --warmup_steps=0 --max_grad_norm=100 \
    --per_device_train_batch_size=4 --max_steps=3 --seed=42 --logging_steps=1 --save_strategy=no \
    --eval_file="$train" --per_device_eval_batch_size=4 --eval_strategy=no \
    --cache_dir=cache --output_dir=ours "$@" > ours.log 2>&1 || { cat ours.log; fail "the run"; return; }
  python3 - ours/eval_results.json "$golden/st_eval$suffix.tsv" <<'PY' || fail "the final evaluation differs"
import json, sys
ours = json.load(open(sys.argv[1]))
reference = dict(line.split("\t") for line in open(sys.argv[2]).read().splitlines())
failed = False
for name, value in reference.items():
    value = float(value)
    if name == "eval_loss":  # fp32 sums in other orders
        ok = abs(ours[name] - value) <= 1e-5 * abs(value)
    elif name == "eval_pearson_cosine":  # cosines of two trainings' weights
        ok = name in ours and abs(ours[name] - value) <= 5e-6
    else:  # counts and ranks over the same ranking: the same double
        ok = ours.get(name) == value
    print(f"  {name}: ours {ours.get(name)}, reference {value!r}{'' if ok else '  FAILED'}")
    failed |= not ok
sys.exit(failed)
PY
  [ "$(step_field examples | tr '\n' ' ')" = "4 8 10 " ] || fail "rows $(step_field examples | tr '\n' ' '), expected 4 8 10"
  check_steps "$golden/st_steps$suffix.tsv" loss 3 1e-5 3
  check_steps "$golden/st_steps$suffix.tsv" grad_norm 4 1e-4 3
  check_steps "$golden/st_steps$suffix.tsv" lr 5 1e-9 3
  echo -n "weights after step 3 vs sentence-transformers': "
  "$compare" ours/model.safetensors "$golden/model$suffix.safetensors" --tolerance="$weight_tolerance" || fail "the weights differ"
  "$predict" --model_dir=ours --input_file="$train" --text_column="${columns%%,*}" --output_file=anchors.npy \
    > predict.log 2>&1 || { cat predict.log; fail "xlmr_predict"; }
  python3 - anchors.npy "$golden/anchor_embeddings$suffix.npy" <<'PY' || fail "the anchors' embeddings differ from encode()'s"
import ast, struct, sys
def load(path):  # a .npy of format 1.0: magic, version, header length, header dict, data
    data = open(path, "rb").read()
    assert data[:8] == b"\x93NUMPY\x01\x00", data[:8]
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode("latin1"))
    assert (10 + length) % 64 == 0 and header["descr"] == "<f4" and not header["fortran_order"], header
    rows, width = header["shape"]
    return (rows, width), struct.unpack(f"<{rows * width}f", data[10 + length:])
(shape, ours), (golden_shape, theirs) = load(sys.argv[1]), load(sys.argv[2])
assert shape == golden_shape == (10, 32), (shape, golden_shape)
worst = max(abs(a - b) for a, b in zip(ours, theirs)) / max(abs(b) for b in theirs)
print(f"anchors' embeddings vs encode(): worst {worst:.3g} of the largest (tolerance 1e-5)")
sys.exit(worst > 1e-5)
PY
}

source "$RUNFILES_DIR/xlmr_trainer/tests/recipes/step_table.sh"
run_and_check "" 3e-6 train.jsonl anchor,positive,negative
for file in modules.json sentence_bert_config.json 1_Pooling/config.json config_sentence_transformers.json; do
  [ -f "ours/$file" ] || fail "no $file"
  grep -q "\"name\":\"$file\"" ours/manifest.json || fail "$file is not in manifest.json"
done
grep -q '"sentence_transformers.models.Pooling"' ours/modules.json || fail "modules.json: $(cat ours/modules.json)"
grep -q '"pooling_mode_mean_tokens": true' ours/1_Pooling/config.json || fail "pooling: $(cat ours/1_Pooling/config.json)"
grep -q '"word_embedding_dimension": 32' ours/1_Pooling/config.json || fail "width: $(cat ours/1_Pooling/config.json)"
grep -q '"RobertaModel"' ours/config.json || fail "config.json does not name RobertaModel"
# The cached loss (GradCache) against sentence-transformers' CachedMultipleNegativesRankingLoss
# (mini-batches of 3 texts of one column, as there).
run_and_check _cached 5e-6 train.jsonl anchor,positive,negative --mini_batch_size=3
# Its padded form: the mini-batches cut from padded rows (data::SliceSequences trims each to its
# longest), against the same reference.
run_and_check _cached 5e-6 train.jsonl anchor,positive,negative --mini_batch_size=3 --padding_free=false
# The symmetric loss (each positive also scored against the anchors).
run_and_check _symmetric 3e-6 train.jsonl anchor,positive,negative --embedding_loss=multiple_negatives_symmetric_ranking
# Scored pairs with CoSENT against sentence-transformers' CoSENTLoss (the score column "score").
run_and_check _cosent 5e-6 train_scored.jsonl sentence1,sentence2 --embedding_loss=cosent
[ "$failures" -eq 0 ] && echo "xlmr_finetune's sentence-embedding runs match sentence-transformers' trainer"
exit "$failures"
