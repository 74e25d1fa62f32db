#!/usr/bin/env bash
# CPU training throughput and memory: xlmr_finetune (built with -c opt) against Hugging Face
# transformers + PyTorch (eager and sdpa attention) on the embedded default's model and data.
# A benchmark, never a test. Results are kept in bench/results/cpu_train.md.
#
#   bench/cpu_train_bench.sh [--steps N] [--warmup W] [--threads T] [--max_load L] [--wait_seconds S]
#
# Both sides: recipes/data/langid/config.json with random weights, train.tsv, the same batches
# of 32 in the same order (bench/hf_train_cpu.py ports our shuffle; the summary checks the
# per-step token counts match), max_seq_length 128, dynamic padding, fp32, AdamW with a
# linear schedule, gradient clipping 1.0, T threads (OpenBLAS for ours, torch.set_num_threads
# for HF). Steps 1..W are warm-up; the table gives medians over steps W+1..N.
#
# The machine may be shared: the script first waits (up to S seconds) until the 1-minute load
# average is below L, and prints the load before and after each run; numbers taken under
# load are not comparable across runs.
set -euo pipefail

steps=60 warmup=10 threads=2 max_load=1.5 wait_seconds=900
while [ $# -gt 0 ]; do
  case "$1" in
    --steps=*) steps=${1#*=} ;; --warmup=*) warmup=${1#*=} ;; --threads=*) threads=${1#*=} ;;
    --max_load=*) max_load=${1#*=} ;; --wait_seconds=*) wait_seconds=${1#*=} ;;
    *) echo "usage: $0 [--steps=N] [--warmup=W] [--threads=T] [--max_load=L] [--wait_seconds=S]" >&2; exit 2 ;;
  esac
  shift
done
[ "$warmup" -lt "$steps" ] || { echo "--warmup must be below --steps" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
data="$repo/recipes/data/langid"
work=$(mktemp -d /tmp/cpu_train_bench.XXXXXX)
load() { cut -d' ' -f1-3 /proc/loadavg; }

wait_for_quiet_machine() {
  local waited=0
  until awk -v max="$max_load" '{ exit !($1 < max) }' /proc/loadavg; do
    if [ "$waited" -ge "$wait_seconds" ]; then
      echo "load average still $(load) after ${waited}s (want < $max_load); try later or pass --max_load" >&2
      exit 3
    fi
    echo "load average $(load); waiting for < $max_load" >&2
    sleep 30
    waited=$((waited + 30))
  done
}

# --symlink_prefix=/ leaves the bazel-bin link alone (it keeps pointing at the fastbuild tree).
(cd "$repo" && bazel build -c opt --symlink_prefix=/ //recipes:xlmr_finetune >&2)
finetune="$(cd "$repo" && bazel info -c opt bazel-bin 2> /dev/null)/recipes/xlmr_finetune"

ours_flags=(--train_file="$data/train.tsv" --per_device_train_batch_size=32 --max_seq_length=128
            --cache_dir="$work/cache" --save_total_limit=1 --logging_steps="$steps")
# Tokenizes into the cache once, so the measured run maps it like any later run would.
OPENBLAS_NUM_THREADS=$threads "$finetune" "${ours_flags[@]}" --max_steps=1 --output_dir="$work/warm" > "$work/warm.log" 2>&1

wait_for_quiet_machine
echo "- ours: load average before $(load)"
OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads /usr/bin/time -f %M -o "$work/ours.max_rss_kib" \
  "$finetune" "${ours_flags[@]}" --max_steps="$steps" --output_dir="$work/ours" > "$work/ours.log" 2>&1 ||
  { cat "$work/ours.log" >&2; exit 1; }
hf_args=()
for attention in eager sdpa; do
  wait_for_quiet_machine
  echo "- HF $attention: load average before $(load)"
  OMP_NUM_THREADS=$threads python3 "$repo/bench/hf_train_cpu.py" --data_dir="$data" --steps="$steps" \
    --threads="$threads" --attn_implementation="$attention" > "$work/hf_$attention.json" 2> "$work/hf_$attention.log" ||
    { cat "$work/hf_$attention.log" >&2; exit 1; }
  hf_args+=(--hf="$attention=$work/hf_$attention.json")
done
echo "- load average after $(load)"
echo "- versions: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("torch", r["torch"], "transformers", r["transformers"])' "$work/hf_eager.json")"
python3 "$repo/bench/cpu_train_summary.py" --config="$data/config.json" --warmup="$warmup" \
  --ours_metrics="$work/ours/metrics.jsonl" --ours_max_rss_kib="$(tail -n 1 "$work/ours.max_rss_kib")" "${hf_args[@]}"
echo "(raw runs in $work)"
