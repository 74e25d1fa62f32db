# Sourced by the recipe tests that hold a run's metrics.jsonl to a reference trainer's per-step
# table (hf_trainer_parity_test.sh, st_trainer_parity_test.sh). The caller defines fail().
# step_field FIELD: FIELD of every train line of ours/metrics.jsonl, one per line.
step_field() { grep '"type":"train"' ours/metrics.jsonl | sed -nE "s/.*\"$1\":([-0-9.e+]+).*/\1/p"; }
# check_steps TABLE FIELD COLUMN TOLERANCE STEPS: metrics.jsonl's FIELD against column COLUMN of
# TABLE (a tsv with a header), step by step, within TOLERANCE relative; STEPS steps expected.
check_steps() {
  local table=$1 ours_name=$2 column=$3 tolerance=$4 steps=$5
  paste <(step_field "$ours_name") <(tail -n +2 "$table" | cut -f"$column") > pairs.txt
  [ "$(wc -l < pairs.txt)" -eq "$steps" ] || { fail "$ours_name: not $steps steps"; return; }
  local step=0
  while read -r ours reference; do
    step=$((step + 1))
    awk -v a="$ours" -v b="$reference" -v t="$tolerance" -v name="$ours_name" -v step="$step" 'BEGIN {
      d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
      printf "  step %d %s: ours %s, reference %s, relative difference %.3g (tolerance %s)\n", step, name, a, b, d / m, t
      exit !(d <= t * m) }' || fail "$ours_name: $ours, reference $reference"
  done < pairs.txt
}
