#!/usr/bin/env bash
# The features part of the GPU kit (tools/gpu_verify.sh device): every training feature that no
# GPU test or e2e run covers, trained for a few steps on the GPU and on the CPU, the exact oracle,
# with the same flags, seed and data; tools/gpu_features_summary.py compares each pair against
# the bounds its docstring argues and writes OUT/features.md (exit 1 when one is outside).
#
#   tools/gpu_features.sh --bundle=DIR | --finetune=BINARY  [options]
#
# Runs (each --max_steps=STEPS --logging_steps=1 --seed=42):
#   token_classification  the embedded langid_ner (--task=token_classification)
#   question_answering    the embedded langid_qa (--task=question_answering)
#   sentence_embedding    the embedded langid_bitext (--task=sentence_embedding) with the cached
#                         loss (--mini_batch_size=16 of 32 rows): pooling, row normalisation,
#                         in-batch negatives and the retrieval evaluation
#   regression            --task=regression on langid test rows, label = length / 10
#   bert, roberta, camembert  --model_dir= the tiny random models of tests/golden, fine-tuned
#                         on 4 languages of langid's test rows (a new head from the seed)
#   bf16                  the embedded default under --bf16
#   fp16_overflow         the embedded default under --fp16 --loss_scale_init=2^24: the first
#                         steps overflow and are skipped, the scale halving each time
#   recompute_selective   --attention=eager --activation_memory_budget=0.95 on 16 rows that
#                         fill 128 tokens (batch 16: every step has the probed shape): plan SK
#   recompute_packed      the same rows packed (fused attention) under a budget of 0.7: plan RK
# The two recompute runs also run --print_memory_plan on each side (the per-rank bytes the
# plan predicts for weights, gradients and optimizer state).
#
# Options (defaults in brackets):
#   --out=DIR             results: DIR/features.md and DIR/features/RUN/{device,oracle}/ with
#                         their logs [$OUT, else ./gpu_features_out]
#   --device=D            the side under test [cuda]; the oracle side is always cpu
#                         (tests/tools/gpu_features_test.sh runs cpu against cpu)
#   --steps=N             optimizer steps per run [20]
#   --oracle_jobs=N       oracle runs at once [4: 8 of the GPU host's 16 cores, the rest left
#                         to e2e's CPU run beside them]; each with OPENBLAS_NUM_THREADS=
#   --oracle_threads=N    [2] (results do not depend on it: tests/recipes:thread_count_test)
#   --run_timeout=S       stop any one run after S seconds (exit status 124 in its row), so a
#                         hang leaves the other runs compared [150]
#   --only=RUN,...        these runs only
#   --eval_rows=N         evaluate on N rows only (the first N of langid's test split, of
#                         langid_ner's, langid_qa's and langid_bitext's dev splits, which must then be under
#                         recipes/data/ too) instead of the full dev and test splits; for the
#                         CPU test, whose oracle would otherwise spend most of its time there
#   --plant=RUN:FLAG      test only: adds FLAG to the device side of RUN (repeatable), a
#                         planted difference the summary must catch
# The device runs go one after another (they share one GPU), the oracle runs beside them.
# Exit status: 0 when every run ran and every comparison is within its bound, 1 otherwise, 2 for
# a usage error.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}" >&2; exit 2; }
bundle="" finetune="" out=${OUT:-$PWD/gpu_features_out} device=cuda steps=20 oracle_jobs=4 oracle_threads=2
only="" plants=() eval_rows=0 run_timeout=150
for arg in "$@"; do
  case "$arg" in
    --bundle=*) bundle=${arg#*=} ;; --finetune=*) finetune=${arg#*=} ;; --out=*) out=${arg#*=} ;;
    --device=*) device=${arg#*=} ;; --steps=*) steps=${arg#*=} ;;
    --oracle_jobs=*) oracle_jobs=${arg#*=} ;; --oracle_threads=*) oracle_threads=${arg#*=} ;;
    --only=*) only=${arg#*=} ;; --run_timeout=*) run_timeout=${arg#*=} ;;
    --eval_rows=*) eval_rows=${arg#*=} ;; --plant=*) plants+=("${arg#*=}") ;;
    *) usage ;;
  esac
done
positive='^[1-9][0-9]*$'
[[ $steps =~ $positive && $eval_rows =~ ^[0-9]+$ && $run_timeout =~ $positive && $oracle_jobs =~ $positive &&
  $oracle_threads =~ $positive ]] ||
  { echo "gpu_features.sh: --steps, --eval_rows, --run_timeout, --oracle_jobs, --oracle_threads: whole numbers" >&2
    exit 2; }
if [ -n "$bundle" ]; then
  [ -x "$bundle/run.sh" ] || { echo "--bundle=$bundle: no run.sh" >&2; exit 2; }
  finetune_cmd=("$bundle/run.sh" recipes/xlmr_finetune)
elif [ -n "$finetune" ]; then
  finetune_cmd=("$(cd "$(dirname "$finetune")" && pwd)/$(basename "$finetune")")
else
  usage
fi

mkdir -p "$out/features/data"
out=$(cd "$out" && pwd)
root=$out/features
data=$root/data
golden=$repo/tests/golden

# The data the runs read besides the embedded sets, all from langid's test split (in the kit).
python3 - "$repo/recipes/data" "$data" "$eval_rows" <<'PYTHON' || { echo "gpu_features.sh: no data" >&2; exit 1; }
import os, sys
recipes_data, data, eval_rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
source = os.path.join(recipes_data, "langid", "test.tsv")
rows = [line.rstrip("\n").split("\t") for line in open(source, encoding="utf-8")][1:]
dev_rows = eval_rows or None
def write(name, header, lines):
    with open(os.path.join(data, name), "w", encoding="utf-8") as handle:
        handle.write(header + "\n")
        handle.writelines(line + "\n" for line in lines)
# Regression: the label is the message's length in characters / 10 (make_length_regression.py).
numeric = [f"{text}\t{len(text) / 10:.1f}" for text, _ in rows]
write("regression_train.tsv", "text\tlabel", numeric[:640])
write("regression_dev.tsv", "text\tlabel", numeric[640:840][:dev_rows])
# Four languages for the model families (the tiny models' heads are replaced).
four = [f"{text}\t{label}" for text, label in rows if label in ("de", "fr", "ru", "zh_CN")]
write("family_train.tsv", "text\tlabel", four[:480])
write("family_dev.tsv", "text\tlabel", four[480:600][:dev_rows])
# 16 rows of 20 messages each, every row beyond 128 tokens: at batch 16 every step holds all 16,
# the shape the memory plan probes ([16, 128] padded, the same tokens packed).
write("fixed_shape.tsv", "text\tlabel",
      [" ".join(r[0] for r in rows[20 * i:20 * (i + 1)]) + "\t" + rows[20 * i][1] for i in range(16)])
if eval_rows:  # --eval_rows: short evaluation files for the runs on embedded data
    write("langid_eval.tsv", "text\tlabel", [f"{text}\t{label}" for text, label in rows[:eval_rows]])
    sentences = open(os.path.join(recipes_data, "langid_ner", "dev.conll"), encoding="utf-8").read().split("\n\n")
    with open(os.path.join(data, "ner_eval.conll"), "w", encoding="utf-8") as handle:
        handle.write("\n\n".join(sentences[:eval_rows]) + "\n")
    questions = open(os.path.join(recipes_data, "langid_qa", "dev.jsonl"), encoding="utf-8").readlines()
    with open(os.path.join(data, "qa_eval.jsonl"), "w", encoding="utf-8") as handle:
        handle.writelines(questions[:eval_rows])
    pairs = open(os.path.join(recipes_data, "langid_bitext", "dev.jsonl"), encoding="utf-8").readlines()
    with open(os.path.join(data, "bitext_eval.jsonl"), "w", encoding="utf-8") as handle:
        handle.writelines(pairs[:eval_rows])
PYTHON

# RUN|flags (the data paths relative to $data, the model directories to $golden).
family="--train_file=@data/family_train.tsv --eval_file=@data/family_dev.tsv --per_device_train_batch_size=16"
family+=" --learning_rate=1e-3"
fixed="--train_file=@data/fixed_shape.tsv --per_device_train_batch_size=16"
runs=(
  "token_classification|--task=token_classification"
  "question_answering|--task=question_answering"
  "sentence_embedding|--task=sentence_embedding --per_device_train_batch_size=32 --mini_batch_size=16"
  "regression|--task=regression --train_file=@data/regression_train.tsv --eval_file=@data/regression_dev.tsv
    --per_device_train_batch_size=32 --learning_rate=1e-3"
  "bert|--model_dir=@golden/tiny_bert/sequence_classification $family --max_seq_length=40"
  "roberta|--model_dir=@golden/tiny_roberta/model $family --max_seq_length=64"
  "camembert|--model_dir=@golden/tiny_camembert/model $family --max_seq_length=64"
  "bf16|--bf16"
  "fp16_overflow|--fp16 --loss_scale_init=16777216"
  "recompute_selective|$fixed --attention=eager --activation_memory_budget=0.95"
  "recompute_packed|$fixed --activation_memory_budget=0.7"
)

# --eval_rows: the embedded runs evaluate on the short files instead.
if [ "$eval_rows" -gt 0 ]; then
  for i in "${!runs[@]}"; do
    case "${runs[$i]%%|*}" in
      token_classification) runs[$i]+=" --eval_file=@data/ner_eval.conll --test_file=@data/ner_eval.conll" ;;
      question_answering) runs[$i]+=" --eval_file=@data/qa_eval.jsonl --test_file=@data/qa_eval.jsonl" ;;
      sentence_embedding) runs[$i]+=" --eval_file=@data/bitext_eval.jsonl --test_file=@data/bitext_eval.jsonl" ;;
      bf16 | fp16_overflow) runs[$i]+=" --eval_file=@data/langid_eval.tsv --test_file=@data/langid_eval.tsv" ;;
    esac
  done
fi

selected() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
run_flags() {  # RUN: prints its flags, one a line, paths resolved
  local entry flag
  for entry in "${runs[@]}"; do
    [ "${entry%%|*}" = "$1" ] || continue
    for flag in ${entry#*|}; do
      flag=${flag//@data/$data}
      echo "${flag//@golden/$golden}"
    done
  done
}
planted() {  # RUN: the --plant flags for RUN's device side, one a line
  local plant
  for plant in ${plants[@]+"${plants[@]}"}; do
    [ "${plant%%:*}" = "$1" ] && echo "${plant#*:}"
  done
  return 0
}

# One side of one run: training, then for a recompute run --print_memory_plan with its flags.
run_side() {  # RUN SIDE(device|oracle) DEVICE [extra flags...]
  local name=$1 side=$2 on=$3 dir=$root/$1 flags
  shift 3
  mapfile -t flags < <(run_flags "$name")
  rm -rf "${dir:?}/$side" "$dir/cache_$side"
  timeout -k 5 "$run_timeout" "${finetune_cmd[@]}" --device="$on" --seed=42 --max_steps="$steps" --logging_steps=1 --save_total_limit=1 \
    --output_dir="$dir/$side" --cache_dir="$dir/cache_$side" "${flags[@]}" "$@" >"$dir/$side.log" 2>&1
  local status=$?
  echo "$status" >"$dir/$side.status"
  if [[ $name == recompute_* ]]; then
    timeout -k 5 "$run_timeout" "${finetune_cmd[@]}" --device="$on" --seed=42 --output_dir="$dir/plan_$side" --cache_dir="$dir/cache_$side" \
      "${flags[@]}" "$@" --print_memory_plan >"$dir/plan_$side.txt" 2>"$dir/plan_$side.log" ||
      echo "--print_memory_plan exited $?" >>"$dir/plan_$side.txt"
  fi
  echo "gpu_features.sh: $name on $on ($side): exit $status" >&2
  return 0
}

names=()
for entry in "${runs[@]}"; do
  selected "${entry%%|*}" && names+=("${entry%%|*}")
done
[ ${#names[@]} -gt 0 ] || { echo "--only=$only: no such run" >&2; exit 2; }
for name in "${names[@]}"; do mkdir -p "$root/$name"; done

# The oracle runs in the background, at most oracle_jobs at once; the device runs in order.
(
  export OPENBLAS_NUM_THREADS=$oracle_threads
  for name in "${names[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$oracle_jobs" ]; do wait -n; done
    run_side "$name" oracle cpu &
  done
  wait
) &
oracle_pid=$!
for name in "${names[@]}"; do
  mapfile -t extra < <(planted "$name")
  run_side "$name" device "$device" ${extra[@]+"${extra[@]}"}
done
wait "$oracle_pid"

python3 "$repo/tools/gpu_features_summary.py" "$root" --device="$device" --steps="$steps" \
  --runs="$(IFS=,; echo "${names[*]}")" >"$out/features.md"
status=$?
cat "$out/features.md"
exit $status
