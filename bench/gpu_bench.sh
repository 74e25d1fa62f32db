#!/usr/bin/env bash
# GPU training speed and memory in one command: xlmr_finetune (from a tools/bundle.sh bundle, no
# Bazel needed) against Hugging Face transformers + PyTorch AMP with eager and sdpa attention, on
# XLM-R base and large shaped models with random weights, the same batches, at sequence lengths
# 512 and 128, with and without gradient checkpointing. A benchmark, never a test.
#
#   tools/bundle.sh //recipes:xlmr_finetune /tmp/xlmr_bundle        # on the build machine
#   bench/gpu_bench.sh --bundle=/tmp/xlmr_bundle                     # on the GPU host
#   bench/gpu_bench.sh --dry-run [--finetune=bazel-bin/recipes/xlmr_finetune]   # check it on a CPU
#
# Options (defaults in brackets):
#   --bundle=DIR | --finetune=BINARY  our trainer: a bundle's run.sh, or a binary run in place
#                                     (none: only the HF side runs)
#   --sizes=base,large  --seq_lens=512,128  --checkpointing=off,on  --runners=ours,eager,sdpa
#   --batch_tokens=8192   tokens per step: batch = batch_tokens / seq_len, the same on both sides
#   --steps=30 --warmup=10   medians over steps warmup+1..steps
#   --device=cuda         cpu runs fp32 on the CPU (the dry run's mode)
#   --peak_tflops=X       for MFU on GPUs the summary does not know
#   --python=python3      the interpreter with torch and transformers
#   --run_timeout=S       stop any one run (ours or HF) after S seconds and record it as
#                         failed, so one hang leaves the others measured (default: no limit)
#   --profile=SIZE:SEQ,...  our runs of these shapes without checkpointing train 2 more steps
#                         (steps+1 and steps+2, left out of the medians) under --profile_steps;
#                         their profile goes to OUT/profile_SIZE_SEQ/ (default: none)
#   --variants=SEQ:VARIANT,...  more runs at that sequence length, per size and runner, without
#                         checkpointing: accumN (N micro-batches of batch_tokens per optimizer
#                         step: --gradient_accumulation_steps=N, HF's --accumulation=N; accum4 at
#                         seq 128 is the 32k-token step) or bf16 (ours --bf16, HF bf16 autocast
#                         without a scaler) or nographs (ours alone with --cuda_graphs=false:
#                         every step op by op, runner ours-nographs) or measured (ours alone
#                         with --gemm_algorithms=measured, runner ours-measured); the same --steps and
#                         --warmup, in optimizer steps (default: none)
#   --dry-run             sizes=tiny, seq_lens=64,32, batch_tokens=256, steps=4, warmup=1, cpu,
#                         profile=tiny:64, variants=64:accum2,64:bf16,64:nographs,64:measured
#
# Output: the table on stdout and, under $OUT (else --out=DIR, else ./gpu_bench_out):
# gpu_bench.md (table, device, versions, command; for our runs a second table of kernel launches
# and host waits per step from metrics.jsonl), runs.jsonl, logs.tar.gz, and per --profile shape
# profile_SIZE_SEQ/ (op_classes.md, op_classes.json, trace.json.gz: gzip -d, then Perfetto).
#
# Both trainers: fp16 AMP (fp32 master weights, dynamic loss scaling; a bf16 variant: bf16
# autocast, no loss scaling; on the CPU fp32), AdamW lr 2e-5 without
# weight decay, linear schedule, clipping at 1.0, dropout 0.1, every example filling seq_len
# (long random-word texts, truncated) so each step has exactly batch x seq_len tokens. If our
# binary cannot train on the device (built without CUDA, or it fails), the script says so in the
# table and still measures the HF side.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bundle="" finetune="" sizes=base,large seq_lens=512,128 checkpointing=off,on runners=ours,eager,sdpa
batch_tokens=8192 steps=30 warmup=10 device=cuda peak_tflops="" python=python3 out=${OUT:-} run_timeout=0
profile="" variants=""
# The profiled steps of a --profile run, after the measured ones.
profile_extra_steps=2
usage() { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
for arg in "$@"; do
  case "$arg" in
    --bundle=*) bundle=${arg#*=} ;; --finetune=*) finetune=${arg#*=} ;;
    --sizes=*) sizes=${arg#*=} ;; --seq_lens=*) seq_lens=${arg#*=} ;;
    --checkpointing=*) checkpointing=${arg#*=} ;; --runners=*) runners=${arg#*=} ;;
    --batch_tokens=*) batch_tokens=${arg#*=} ;; --steps=*) steps=${arg#*=} ;; --warmup=*) warmup=${arg#*=} ;;
    --device=*) device=${arg#*=} ;; --peak_tflops=*) peak_tflops=${arg#*=} ;;
    --python=*) python=${arg#*=} ;; --out=*) out=${arg#*=} ;; --run_timeout=*) run_timeout=${arg#*=} ;;
    --profile=*) profile=${arg#*=} ;; --variants=*) variants=${arg#*=} ;;
    --dry-run) sizes=tiny seq_lens=64,32 batch_tokens=256 steps=4 warmup=1 device=cpu profile=tiny:64
      variants=64:accum2,64:bf16,64:nographs,64:measured ;;
    *) usage ;;
  esac
done
[ "$warmup" -lt "$steps" ] || { echo "--warmup must be below --steps" >&2; exit 2; }
[ "$device" = cuda ] || [ "$device" = cpu ] || { echo "--device: cuda or cpu" >&2; exit 2; }
[[ $run_timeout =~ ^[0-9]+$ ]] || { echo "--run_timeout=$run_timeout: a whole number of seconds" >&2; exit 2; }
[[ $profile =~ ^([a-z]+:[0-9]+(,[a-z]+:[0-9]+)*)?$ ]] || { echo "--profile=$profile: SIZE:SEQ[,SIZE:SEQ...]" >&2; exit 2; }
[[ $variants =~ ^([0-9]+:(accum[1-9][0-9]*|bf16|nographs|measured)(,[0-9]+:(accum[1-9][0-9]*|bf16|nographs|measured))*)?$ ]] ||
  { echo "--variants=$variants: SEQ:accumN|SEQ:bf16|SEQ:nographs|SEQ:measured[,...]" >&2; exit 2; }
# The precision of the runs that are not a bf16 variant.
default_precision=fp16
[ "$device" = cpu ] && default_precision=fp32
out=${out:-$PWD/gpu_bench_out}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_bench.XXXXXX")
runs="$work/runs.jsonl"
: >"$runs"
hf="$repo/bench/hf_train_gpu.py"
# One run's command under --run_timeout (timeout's exit status 124 marks a run it stopped).
limited() {
  if [ "$run_timeout" -gt 0 ]; then timeout -k 10 "$run_timeout" "$@"; else "$@"; fi
}

# Our trainer as a command (array), or empty.
ours=()
if [ -n "$bundle" ]; then
  [ -x "$bundle/run.sh" ] || { echo "--bundle=$bundle: no run.sh (make one with tools/bundle.sh)" >&2; exit 2; }
  ours=("$bundle/run.sh" recipes/xlmr_finetune)
elif [ -n "$finetune" ]; then
  ours=("$(cd "$(dirname "$finetune")" && pwd)/$(basename "$finetune")")
fi

sentencepiece_model() {
  local candidate
  for candidate in "$repo/recipes/data/langid/sentencepiece.bpe.model" \
    "$bundle"/recipes/xlmr_finetune.runfiles/*/recipes/data/langid/sentencepiece.bpe.model; do
    [ -f "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "no sentencepiece.bpe.model in $repo/recipes/data/langid or the bundle" >&2
  exit 2
}

# Appends one run to runs.jsonl (JSON written by Python: reasons may hold any character).
# precision and accumulation are those of the current configuration ($precision, $accumulation).
record() {  # size seq batch checkpointing runner status reason result [profile_steps profile_dir]
  "$python" - "$precision" "$accumulation" "$@" >>"$runs" <<'PYTHON'
import json, sys
precision, accumulation, size, seq, batch, ckpt, runner, status, reason, result = sys.argv[1:11]
run = {"size": size, "seq_len": int(seq), "batch_size": int(batch), "checkpointing": ckpt,
       "precision": precision, "accumulation": int(accumulation),
       "runner": runner, "status": status, "reason": reason, "result": result}
if len(sys.argv) > 12 and sys.argv[11]:
    run["profile_steps"], run["profile"] = sys.argv[11], sys.argv[12]  # steps left out of medians
print(json.dumps(run))
PYTHON
}

# Whether our run of this size, sequence length and checkpointing setting is profiled (never a
# variant's run).
profiled() {  # size seq checkpointing
  [ "$3" = off ] && [ "$precision" = "$default_precision" ] && [ "$accumulation" = 1 ] && [ -z "$ours_only" ] &&
    [[ ",$profile," == *",$1:$2,"* ]]
}

# Moves a run's profile (<output_dir>/profile) to OUT/profile_SIZE_SEQ, its trace gzipped (a
# trace of XLM-R large is megabytes of JSON, a tenth of that compressed).
keep_profile() {  # run_output_dir size seq
  local from=$1/profile to="$out/profile_$2_$3"
  [ -d "$from" ] || return 0
  rm -rf "$to"
  mv "$from" "$to"
  [ -f "$to/trace.json" ] && gzip -f "$to/trace.json"
  return 0
}

# Whether our binary trains on $device at all (a build without CUDA refuses --device=cuda).
# Sets ours_unavailable to the reason, or leaves it empty.
probe_ours() {
  ours_unavailable=""
  if [ ${#ours[@]} -eq 0 ]; then ours_unavailable="no --bundle or --finetune given"; return; fi
  if ! limited "${ours[@]}" --device="$device" --max_steps=1 --logging_steps=1 --output_dir="$work/probe" \
    --cache_dir="$work/cache" >"$work/probe.log" 2>&1; then
    ours_unavailable="xlmr_finetune --device=$device: $(grep -v '^\s*$' "$work/probe.log" | tail -n 1)"
    echo "ours: not available ($ours_unavailable); measuring the HF side only" >&2
  fi
}

run_ours() {  # model_dir data seq batch checkpointing tag
  local model=$1 data=$2 seq=$3 batch=$4 ckpt=$5 tag=$6 flags=() run_steps=$steps window="" runner=ours
  [ "$ours_only" = nographs ] && flags+=(--cuda_graphs=false) && runner=ours-nographs
  [ "$ours_only" = measured ] && flags+=(--gemm_algorithms=measured) && runner=ours-measured
  [ "$precision" = fp16 ] && flags+=(--fp16)
  [ "$precision" = bf16 ] && flags+=(--bf16)
  [ "$accumulation" -gt 1 ] && flags+=(--gradient_accumulation_steps="$accumulation")
  [ "$ckpt" = on ] && flags+=(--gradient_checkpointing)
  if profiled "$size" "$seq" "$ckpt"; then
    run_steps=$((steps + profile_extra_steps))
    window="$((steps + 1)):$run_steps"
    flags+=(--profile_steps="$window")
  fi
  if [ -n "$ours_unavailable" ]; then
    record "$size" "$seq" "$batch" "$ckpt" "$runner" unavailable "$ours_unavailable" ""
    return
  fi
  echo "- ours: $tag" >&2
  if limited "${ours[@]}" --device="$device" "${flags[@]}" --model_dir="$model" --train_file="$data" \
    --max_seq_length="$seq" --per_device_train_batch_size="$batch" --max_steps="$run_steps" \
    --learning_rate=2e-5 --max_grad_norm=1.0 --weight_decay=0 --logging_steps="$steps" \
    --save_total_limit=1 --cache_dir="$work/cache" --output_dir="$work/ours_$tag" >"$work/ours_$tag.log" 2>&1; then
    record "$size" "$seq" "$batch" "$ckpt" "$runner" ok "" "$work/ours_$tag/metrics.jsonl" \
      "$window" "${window:+profile_${size}_$seq}"
  else
    record "$size" "$seq" "$batch" "$ckpt" "$runner" failed "exit $?: $(tail -n 1 "$work/ours_$tag.log")" ""
  fi
  [ -z "$window" ] || keep_profile "$work/ours_$tag" "$size" "$seq"
}

run_hf() {  # model_dir data seq batch checkpointing attention tag
  local model=$1 data=$2 seq=$3 batch=$4 ckpt=$5 attention=$6 tag=$7 flags=()
  flags+=(--precision="$precision" --accumulation="$accumulation")
  [ "$ckpt" = on ] && flags+=(--gradient_checkpointing)
  echo "- HF $attention: $tag" >&2
  if PYTHONUNBUFFERED=1 limited "$python" "$hf" train --model_dir="$model" --train_file="$data" --batch_size="$batch" \
    --seq_len="$seq" --steps="$steps" --attn_implementation="$attention" --device="$device" "${flags[@]}" \
    >"$work/hf_${attention}_$tag.json" 2>"$work/hf_${attention}_$tag.log"; then
    record "$size" "$seq" "$batch" "$ckpt" "hf-$attention" ok "" "$work/hf_${attention}_$tag.json"
  else
    record "$size" "$seq" "$batch" "$ckpt" "hf-$attention" failed "exit $?: $(tail -n 1 "$work/hf_${attention}_$tag.log")" ""
  fi
}

# The variants of VARIANTS at sequence length SEQ, one a line.
variants_at() {  # seq
  local item
  for item in ${variants//,/ }; do
    [ "${item%%:*}" = "$1" ] && echo "${item#*:}"
  done
  return 0
}

# Runs every requested runner on one configuration ($precision, $accumulation and $ours_only set);
# a variant of ours only (nographs, measured) runs ours alone: HF's runs of the configuration are
# the plain ones.
run_configuration() {  # model data seq batch checkpointing tag
  local model=$1 data=$2 seq=$3 batch=$4 ckpt=$5 tag=$6
  case ",$runners," in *,ours,*) run_ours "$model" "$data" "$seq" "$batch" "$ckpt" "$tag" ;; esac
  [ -z "$ours_only" ] || return 0
  case ",$runners," in *,eager,*) run_hf "$model" "$data" "$seq" "$batch" "$ckpt" eager "$tag" ;; esac
  case ",$runners," in *,sdpa,*) run_hf "$model" "$data" "$seq" "$batch" "$ckpt" sdpa "$tag" ;; esac
}

main() {
  local spm size seq batch ckpt model data vocab variant most
  spm=$(sentencepiece_model)
  probe_ours
  # The tiny dry-run model keeps the langid vocabulary; base and large get XLM-R's 250002.
  for size in ${sizes//,/ }; do
    vocab=250002
    [ "$size" = tiny ] && vocab=8002
    model="$work/model_$size"
    "$python" "$hf" write-model --size="$size" --vocab_size="$vocab" --sentencepiece_model="$spm" \
      --out_dir="$model" >"$work/write_$size.log" 2>&1 || { cat "$work/write_$size.log" >&2; exit 1; }
    for seq in ${seq_lens//,/ }; do
      batch=$((batch_tokens / seq))
      [ "$batch" -ge 1 ] || { echo "--batch_tokens=$batch_tokens is below seq_len $seq" >&2; exit 2; }
      data="$work/train_$seq.tsv"
      # Rows for the profiled steps too (HF reads only the first steps' batches), times the
      # largest accumulation a variant asks for at this length.
      most=1
      for variant in $(variants_at "$seq"); do
        [[ $variant == accum* ]] && [ "${variant#accum}" -gt "$most" ] && most=${variant#accum}
      done
      [ -f "$data" ] || "$python" "$hf" write-data --rows=$((batch * (steps + profile_extra_steps) * most)) \
        --seq_len="$seq" --out="$data"
      precision=$default_precision accumulation=1 ours_only=""
      for ckpt in ${checkpointing//,/ }; do
        run_configuration "$model" "$data" "$seq" "$batch" "$ckpt" "${size}_${seq}_ckpt_$ckpt"
      done
      for variant in $(variants_at "$seq"); do
        precision=$default_precision accumulation=1 ours_only=""
        case "$variant" in
          accum*) accumulation=${variant#accum} ;; bf16) precision=bf16 ;; nographs | measured) ours_only=$variant ;;
        esac
        run_configuration "$model" "$data" "$seq" "$batch" off "${size}_${seq}_$variant"
      done
    done
    rm -rf "$model"  # gigabytes of weights; the logs keep what was measured
  done
}

# Adds each run's model shape (from the size) to runs.jsonl for the FLOP count, then prints and
# writes the table.
summarize() {
  local device_name versions
  device_name=$("$python" -c 'import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu")')
  [ "$device" = cpu ] && device_name=cpu
  versions=$("$python" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)')
  "$python" - "$runs" "$hf" <<'PYTHON'
import importlib.util, json, sys
runs_path, hf_path = sys.argv[1:3]
spec = importlib.util.spec_from_file_location("hf_train_gpu", hf_path)
hf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hf)
runs = [json.loads(line) for line in open(runs_path) if line.strip()]
with open(runs_path, "w") as handle:
    for run in runs:
        run["shape"] = hf.SHAPES[run["size"]]
        handle.write(json.dumps(run) + "\n")
PYTHON
  {
    echo "# GPU training benchmark: xlmr_finetune vs HF transformers + PyTorch AMP"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(uname -n); $versions"
    echo "- command: bench/gpu_bench.sh $*"
    [ -n "$bundle" ] && [ -f "$bundle/BUNDLE_INFO" ] && sed 's/^/- bundle /' "$bundle/BUNDLE_INFO"
    echo
    "$python" "$repo/bench/gpu_bench_summary.py" --runs="$runs" --warmup="$warmup" \
      --device_name="$device_name" ${peak_tflops:+--peak_tflops="$peak_tflops"}
  } | tee "$out/gpu_bench.md"
  cp "$runs" "$out/runs.jsonl"
  tar -czf "$out/logs.tar.gz" -C "$work" --exclude='*.safetensors' --exclude=cache .
  echo "(results in $out; raw runs in $work)" >&2
}

main
summarize "$@"
