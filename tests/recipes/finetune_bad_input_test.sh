#!/usr/bin/env bash
# Every invalid input stops the run before any work: exit status 2, one line on stderr naming
# the flag or file, and no output directory written.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
printf 'text\tlabel\nhello\tpos\nworld\tneg\n' > train.tsv
printf 'text\tlabel\nhi\tneutral\n' > unseen_label.tsv
printf 'sentence\tlabel\nhello\tpos\n' > wrong_column.tsv
printf 'text\tlabel\nhello\tpos\textra\n' > bad_row.tsv
printf 'text\tlabel\n' > train.txt
printf '{"text": "hello", "label": "pos"}\n{"text": "world", "label": "neg", "weight": 1e9999}\n' > overflow.jsonl
failures=0
expect_usage_error() {  # expected-substring, flags...
  local expected="$1"; shift
  rm -rf out
  "$finetune" --output_dir=out --cache_dir=cache "$@" > stdout.txt 2> stderr.txt
  local status=$?
  local lines; lines=$(wc -l < stderr.txt)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$expected" stderr.txt || [ -e out ]; then
    echo "FAILED for $*: status $status, $lines stderr lines, output dir $( [ -e out ] && echo written || echo absent):"
    cat stderr.txt
    failures=$((failures + 1))
  fi
}
expect_usage_error "--per_device_train_batch_size" --per_device_train_batch_size=0
expect_usage_error "--gradient_accumulation_steps" --gradient_accumulation_steps=-2
expect_usage_error "--lr_scheduler_type" --lr_scheduler_type=exponential
expect_usage_error "--learning_rate" --learning_rate=-1
expect_usage_error "--warmup_ratio" --warmup_ratio=1.5
expect_usage_error "--max_seq_length" --max_seq_length=100000
expect_usage_error "--device" --device=tpu
# Asking for the GPU where there is none (the build machines) names the flag and the reason.
if ! nvidia-smi -L > /dev/null 2>&1; then
  expect_usage_error "--device=cuda: no GPU" --device=cuda --train_file=train.tsv
fi
expect_usage_error "--dropout" --dropout=1.5
expect_usage_error "--loss_scale_init" --fp16 --loss_scale_init=0
expect_usage_error "missing.tsv" --train_file=missing.tsv
expect_usage_error "expected .tsv, .csv or .jsonl" --train_file=train.txt
expect_usage_error "--text_column" --train_file=wrong_column.tsv
expect_usage_error "bad_row.tsv:2" --train_file=bad_row.tsv
# A number a double cannot hold (found by tests/fuzz: nlohmann throws out_of_range, not
# parse_error, and the reader caught only the latter: the run aborted).
expect_usage_error "overflow.jsonl:2" --train_file=overflow.jsonl
expect_usage_error "neutral" --train_file=train.tsv --eval_file=unseen_label.tsv
expect_usage_error "--model_dir" --model_dir=no_such_model
expect_usage_error "--resume_from_checkpoint" --resume_from_checkpoint=latest
# What absl::ParseCommandLine rejects itself (with status 1 and several lines) is checked first.
expect_usage_error "--no_such_flag: unknown flag" --no_such_flag=3
expect_usage_error "--lerning_rate: unknown flag" --lerning_rate 1e-3
expect_usage_error "--learning_rate: invalid value 'fast'" --learning_rate=fast
expect_usage_error "--max_steps: invalid value '1.5'" --max_steps=1.5
expect_usage_error "--fp16: invalid value 'maybe'" --fp16=maybe
expect_usage_error "--nofp16: the negated form takes no value" --nofp16=true
expect_usage_error "--max_steps: missing value" --max_steps
expect_usage_error "unexpected argument 'train.tsv'" train.tsv
[ "$failures" -eq 0 ] && echo "all bad inputs rejected"
exit "$failures"
