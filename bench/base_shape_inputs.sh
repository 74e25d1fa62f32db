# Sourced by the base-shape benchmarks (bench/attention_bench.sh, bench/cpu_speed_bench.sh),
# with $repo (the checkout) and $work (a scratch directory) set. Sets:
#   finetune   xlmr_finetune built with -c opt;
#   model      an XLM-R base-shaped classifier with random weights saved by transformers
#              (bench/make_base_model.py), made once per $work;
#   long_tsv   64 rows of ~60 embedded training texts each (far over 512 tokens), so that every
#              example is truncated to exactly --max_seq_length: fixed-length batches;
# and defines median_step_seconds METRICS_JSONL: the median of ours' step times after the first
# (differences of elapsed_seconds between train lines), and, with $base_steps, $base_batch,
# $base_seq and $threads set, the two runners of a fixed-length base-shape run, each printing
# "median_step_seconds peak_rss_bytes" (steps 2..N):
#   ours_base MODEL_DIR [FLAG...]              xlmr_finetune on $long_tsv (peak RSS: /usr/bin/time)
#   hf_base MODEL_DIR ATTENTION [FLAG...]      bench/hf_train_fixed.py (random ids; ru_maxrss)

(cd "$repo" && bazel build -c opt --symlink_prefix=/ //recipes:xlmr_finetune > /dev/null 2>&1) ||
  { echo "bazel build -c opt //recipes:xlmr_finetune failed" >&2; exit 1; }
finetune="$(cd "$repo" && bazel info -c opt bazel-bin 2> /dev/null)/recipes/xlmr_finetune"

model="$work/xlmr_base_random"
[ -f "$model/model.safetensors" ] || python3 "$repo/bench/make_base_model.py" "$model" > /dev/null 2>&1
long_tsv="$work/long.tsv"
[ -f "$long_tsv" ] || python3 - "$repo/recipes/data/langid/train.tsv" "$long_tsv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline=""), delimiter="\t"))
with open(sys.argv[2], "w", newline="") as f:
    out = csv.writer(f, delimiter="\t")
    out.writerow(["text", "label"])
    for i in range(64):
        chunk = rows[i * 60:(i + 1) * 60]
        out.writerow([" ".join(r["text"] for r in chunk), chunk[0]["label"]])
PY

median_step_seconds() {
  python3 - "$1" <<'PY'
import json, statistics, sys
t = [r["elapsed_seconds"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "train"]
print(f"{statistics.median(b - a for a, b in zip(t, t[1:])):.3f}")
PY
}

ours_base() {
  local model_dir=$1 dir="$work/ours_base"
  shift
  rm -rf "$dir"
  /usr/bin/time -f %M -o "$work/ours.rss" "$finetune" --model_dir="$model_dir" --train_file="$long_tsv" \
    --cache_dir="$work/cache" --output_dir="$dir" --logging_steps=1 --save_steps=100000 \
    --max_steps="$base_steps" --per_device_train_batch_size="$base_batch" --max_seq_length="$base_seq" "$@" \
    > "$work/ours.log" 2>&1 || { tail -n 5 "$work/ours.log" >&2; exit 1; }
  echo "$(median_step_seconds "$dir/metrics.jsonl") $(( $(tail -n 1 "$work/ours.rss") * 1024 ))"
}

hf_base() {
  local model_dir=$1
  shift
  python3 "$repo/bench/hf_train_fixed.py" --model_dir="$model_dir" --batch_size="$base_batch" --seq="$base_seq" \
    --steps="$base_steps" --threads="$threads" --attn_implementation="$@" 2> "$work/hf.log" |
    python3 -c "import json, statistics, sys; r = json.load(sys.stdin); print('%.3f %d' % (statistics.median(r['step_seconds'][1:]), r['peak_rss_bytes']))"
}
