#!/usr/bin/env bash
# The fp16 step decisions (finite check, skip, loss-scale update, clip coefficient, AdamW's
# scalars) against a golden recorded from the binary before they moved to the device (issue 38,
# item 2; tests/golden/step_decisions/): 200 steps of the embedded default with --fp16,
# --loss_scale_init=1e9 and --loss_scale_growth_interval=3 (the first 9 steps overflow, then the
# scale grows back into an overflow every 4th step: 56 skipped steps) and --max_grad_norm=0.5
# (clipping acts at nearly every step). Compared EXACTLY, as printed in metrics.jsonl: step, loss,
# lr, grad_norm, loss_scale, skipped of every step, and the sha256 of the final model.safetensors.
# Cases:
#   every_step   --logging_steps=1;
#   resumed      --logging_steps=7 and a checkpoint at step 100: the whole run, then a run resumed
#                from checkpoint-100, both against the golden;
#   mpirun       mpirun -np 2 with per-device batch 16 (its own golden: two ranks add the
#                gradients in another order).
# The CPU's bits depend on the machine (OpenBLAS's kernels and ours are chosen by the CPU's
# instruction sets), so the golden records the CPU it was made on (cpu.txt). On another CPU the
# losses and weights cannot be compared bit for bit; the test then checks, on every case, what
# holds on any machine: the loss scale of every step follows torch.amp.GradScaler's rules from
# the run's own skip flags (counted here: halve after a skip, double after 3 finite steps), a
# skipped step leaves the learning rate where it was, >= 20 steps skip, and the cases agree with
# the every-step run exactly (deferred reads, resume); mpirun against its one-rank run's rules.
# STEP_DECISIONS_WRITE_GOLDEN=DIR writes the golden files into DIR instead of comparing (how
# they were made, from the binary at 6eea890).
set -euo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
golden_dir="$(cd "$(dirname "$2")" && pwd)"
cd "$TEST_TMPDIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
data_dir="$RUNFILES_DIR/xlmr_trainer/recipes/data/langid"
head -n 101 "$data_dir/dev.tsv" > heldout.tsv
common=(--fp16 --max_steps=200 --loss_scale_init=1e9 --loss_scale_growth_interval=3 --max_grad_norm=0.5
        --eval_strategy=no --eval_file=heldout.tsv --test_file=heldout.tsv --save_total_limit=0
        --cache_dir=cache --seed=3)
write_golden="${STEP_DECISIONS_WRITE_GOLDEN:-}"
# What decides the CPU kernels' bits: the CPU model and the instruction sets the kernels pick from.
cpu_fingerprint() {
  local flags
  flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|fma|avx512f|avx512bw|avx512_bf16|amx_bf16|amx_tile' | sort | tr '\n' ' ')
  echo "$(grep -m1 '^vendor_id' /proc/cpuinfo | cut -d: -f2 | xargs) family $(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | xargs) model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | xargs) ($(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | xargs)): $flags"
}
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

fields() {  # METRICS_FILE -> one line per train step: step loss lr grad_norm loss_scale skipped
  grep '"type":"train"' "$1" | sed -nE 's/.*"step":([^,]*),.*"loss":([^,]*),"lr":([^,]*),"grad_norm":([^,]*),"loss_scale":([^,]*),"skipped":([a-z]*),.*/\1 \2 \3 \4 \5 \6/p'
}
# FIELDS_FILE: the loss scales and learning rates a run logged against GradScaler's rules applied
# to its own skip flags (init 1e9, backoff 0.5, growth 2 every 3 finite steps, products rounded
# to float32) and the schedule's standstill on skipped steps; prints what differs.
follows_rules() {
  python3 - "$1" <<'PYEOF'
import struct, sys
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
scale, tracker, bad, previous = f32(1e9), 0, [], None
for line in open(sys.argv[1]):
    step, loss, lr, norm, logged_scale, skipped = line.split()
    if float(logged_scale) != scale:
        bad.append(f"step {step}: loss_scale {logged_scale}, GradScaler's rules give {scale!r}")
    if previous is not None and previous[1] == "true" and lr != previous[0]:
        bad.append(f"step {step}: lr {lr} after a skipped step at lr {previous[0]}")
    if skipped == "true":
        scale, tracker = f32(scale * 0.5), 0
    else:
        tracker += 1
        if tracker == 3:
            scale, tracker = f32(scale * 2.0), 0
    previous = (lr, skipped)
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PYEOF
}
same_cpu=no
[ "$(cpu_fingerprint)" = "$(cat "$golden_dir/cpu.txt")" ] && same_cpu=yes
echo "this CPU: $(cpu_fingerprint); the golden's: $(cat "$golden_dir/cpu.txt"); exact comparison: $same_cpu"
# NAME GOLDEN_FIELDS GOLDEN_SHA RUN_DIR [FIRST_STEP]: the run's fields from FIRST_STEP on and its
# final weights against the golden (on the golden's CPU; elsewhere against the rules, and the
# one-rank cases against this machine's every-step run).
check() {
  local name=$1 golden=$2 sha=$3 dir=$4 first=${5:-1}
  fields "$dir/metrics.jsonl" > "$name.fields"
  [ "$first" -ne 1 ] || follows_rules "$name.fields" || fail "$name: loss scales or learning rates break the rules"
  [ "$(grep -c ' true$' "$name.fields")" -ge $(( first == 1 ? 20 : 1 )) ] || fail "$name: too few skipped steps"
  if [ "$same_cpu" = no ]; then
    [ "$golden" = "$golden_dir/two_ranks.txt" ] && { echo "$name: rules checked (another CPU)"; return; }
    golden=every_step.fields.reference sha=every_step.sha256.reference
  fi
  tail -n +"$first" "$golden" > "$name.expected"
  [ "$(wc -l < "$name.fields")" -eq $((201 - first)) ] || fail "$name: expected $((201 - first)) train lines"
  diff "$name.expected" "$name.fields" > "$name.diff" || { head -20 "$name.diff"; fail "$name: metrics differ from the golden"; }
  [ "$(sha256sum < "$dir/model.safetensors" | cut -d' ' -f1)" = "$(cat "$sha")" ] || fail "$name: final weights differ from the golden"
  echo "$name: steps $first-200 $( [ -s "$name.diff" ] && echo differ || echo identical), $(grep -c ' true$' "$name.fields") skipped"
}

"$finetune" "${common[@]}" --logging_steps=1 --output_dir=every_step > every_step.log 2>&1 || { cat every_step.log; exit 1; }
if [ -n "$write_golden" ]; then
  cpu_fingerprint > "$write_golden/cpu.txt"
  fields every_step/metrics.jsonl > "$write_golden/one_rank.txt"
  sha256sum < every_step/model.safetensors | cut -d' ' -f1 > "$write_golden/one_rank.sha256"
  mpirun --oversubscribe -np 2 "$finetune" "${common[@]}" --per_device_train_batch_size=16 --output_dir=two > two.log 2>&1 || { cat two.log; exit 1; }
  fields two/metrics.jsonl > "$write_golden/two_ranks.txt"
  sha256sum < two/model.safetensors | cut -d' ' -f1 > "$write_golden/two_ranks.sha256"
  echo "golden written to $write_golden"; exit 0
fi
skipped=$(grep -c ' true$' "$golden_dir/one_rank.txt")
[ "$skipped" -ge 20 ] || fail "the golden has only $skipped skipped steps: the test lost its point"
fields every_step/metrics.jsonl > every_step.fields.reference
sha256sum < every_step/model.safetensors | cut -d' ' -f1 > every_step.sha256.reference
check every_step "$golden_dir/one_rank.txt" "$golden_dir/one_rank.sha256" every_step

"$finetune" "${common[@]}" --logging_steps=7 --save_steps=100 --output_dir=whole > whole.log 2>&1 || { cat whole.log; exit 1; }
check whole_logging_7 "$golden_dir/one_rank.txt" "$golden_dir/one_rank.sha256" whole
mkdir -p resumed && cp -r whole/checkpoint-100 resumed/
"$finetune" "${common[@]}" --logging_steps=7 --save_steps=100 --output_dir=resumed --resume_from_checkpoint=latest > resumed.log 2>&1 \
  || { cat resumed.log; exit 1; }
check resumed_at_100 "$golden_dir/one_rank.txt" "$golden_dir/one_rank.sha256" resumed 101

mpirun --oversubscribe -np 2 "$finetune" "${common[@]}" --per_device_train_batch_size=16 --output_dir=two > two.log 2>&1 || { cat two.log; exit 1; }
check mpirun_2 "$golden_dir/two_ranks.txt" "$golden_dir/two_ranks.sha256" two
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
