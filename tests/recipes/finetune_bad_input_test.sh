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
expect_usage_error "--report_to: expected none, tensorboard or all, got wandb" --report_to=wandb
expect_usage_error "--logging_dir: expected --report_to=tensorboard with it, got tb with --report_to=none" --logging_dir=tb
printf 'x' > a_file
expect_usage_error "--logging_dir: expected a directory (or a path where one can be made), got a_file" \
  --report_to=tensorboard --logging_dir=a_file
expect_usage_error "--lr_scheduler_kwargs: expected a JSON object" --lr_scheduler_type=cosine --lr_scheduler_kwargs='{num_cycles: 2}'
expect_usage_error "--lr_scheduler_kwargs: cosine takes only num_cycles; got \"num_cycle\"" --lr_scheduler_type=cosine \
  --lr_scheduler_kwargs='{"num_cycle": 2}'
expect_usage_error "--lr_scheduler_kwargs: linear takes no arguments" --lr_scheduler_kwargs='{"power": 2}'
expect_usage_error "--lr_scheduler_kwargs: power must be a number > 0; got -1" --lr_scheduler_type=polynomial \
  --lr_scheduler_kwargs='{"power": -1}'
expect_usage_error "--lr_scheduler_kwargs: warmup_stable_decay needs num_decay_steps" --lr_scheduler_type=warmup_stable_decay
expect_usage_error "--lr_scheduler_kwargs: cosine_with_min_lr takes exactly one of min_lr and min_lr_rate" \
  --lr_scheduler_type=cosine_with_min_lr
expect_usage_error "--learning_rate" --learning_rate=-1
expect_usage_error "--warmup_ratio" --warmup_ratio=1.5
expect_usage_error "--max_seq_length" --max_seq_length=100000
expect_usage_error "--device" --device=tpu
expect_usage_error "--gemm_algorithms: expected heuristic or measured, got fastest" --gemm_algorithms=fastest
# Asking for the GPU where there is none (the build machines) names the flag and the reason.
if ! nvidia-smi -L > /dev/null 2>&1; then
  expect_usage_error "--device=cuda: no GPU" --device=cuda --train_file=train.tsv
fi
expect_usage_error "--dropout" --dropout=1.5
expect_usage_error "--label_smoothing_factor: expected a number in [0, 1], got 1.5" --label_smoothing_factor=1.5
# --eval_strategy, --save_strategy, the best model and early stopping (TrainingArguments' checks).
expect_usage_error "--eval_strategy: expected no, steps or epoch, got step" --eval_strategy=step
expect_usage_error "--save_strategy: expected no, steps or epoch, got always" --save_strategy=always
expect_usage_error "--save_steps: expected a positive number with --save_strategy=steps" --save_strategy=steps
expect_usage_error "--metric_for_best_model: expected loss or one of accuracy, macro_f1, roc_auc" \
  --load_best_model_at_end --metric_for_best_model=eval_f1
expect_usage_error "--greater_is_better: expected true or false, got yes" --greater_is_better=yes
expect_usage_error "--save_strategy: expected the same as --eval_strategy" --load_best_model_at_end \
  --eval_strategy=steps --eval_steps=10 --save_strategy=epoch
expect_usage_error "--save_steps: expected a multiple of --eval_steps (10)" --load_best_model_at_end \
  --eval_steps=10 --save_steps=15
expect_usage_error "--eval_strategy: expected steps or epoch with --load_best_model_at_end" \
  --load_best_model_at_end --eval_strategy=no --save_strategy=no
expect_usage_error "--early_stopping_patience: expected 0 without --load_best_model_at_end" --early_stopping_patience=3
expect_usage_error "--early_stopping_threshold: expected a non-negative number" --load_best_model_at_end \
  --early_stopping_patience=3 --early_stopping_threshold=-1
expect_usage_error "--label_smoothing_factor: expected a number in [0, 1], got -0.1" --label_smoothing_factor=-0.1
expect_usage_error "--loss_scale_init" --fp16 --loss_scale_init=0
expect_usage_error "--fp16 and --bf16: expected at most one" --fp16 --bf16
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
# --task and the data of token classification and regression.
printf 'hello\tB-x\nworld\tI-x\n\n' > tagged.conll
printf 'hello\tB-x\nworld\n\n' > untagged_line.conll
expect_usage_error "--task: expected sequence_classification, regression, token_classification, question_answering, sentence_embedding or cross_encoder, got bogus" --task=bogus
# --task=sentence_embedding's flags and rows (a hard-negative column that does not exist, an
# empty text: the file, the line and --embedding_columns).
printf '{"anchor": "hello", "positive": "hi there", "negative": "bye"}\n' > triplet.jsonl
printf '{"anchor": "hello", "positive": "hi there", "negative": "bye"}\n{"anchor": "world", "positive": ""}\n' > pairs.jsonl
expect_usage_error "triplet.jsonl:1: no field 'hard' (fields: anchor, negative, positive); set --embedding_columns" \
  --task=sentence_embedding --train_file=triplet.jsonl --embedding_columns=anchor,positive,hard
expect_usage_error "pairs.jsonl:2: empty text in field 'positive' (--embedding_columns)" --task=sentence_embedding \
  --train_file=pairs.jsonl
expect_usage_error "--embedding_columns: expected two or more distinct column names" --task=sentence_embedding \
  --train_file=pairs.jsonl --embedding_columns=anchor
expect_usage_error "--pooling: expected mean or cls, got max" --task=sentence_embedding --train_file=pairs.jsonl --pooling=max
expect_usage_error "--similarity_scale: expected a positive number, got -1" --task=sentence_embedding \
  --train_file=pairs.jsonl --similarity_scale=-1
expect_usage_error "--group_by_length: expected false with --task=sentence_embedding" --task=sentence_embedding \
  --train_file=pairs.jsonl --group_by_length
# --embedding_loss=cosent: its loss name, two columns, no cached form, a training file, and a
# finite score on every row (the file and the line).
printf '{"sentence1": "a", "sentence2": "b", "score": 0.5}\n{"sentence1": "c", "sentence2": "d", "score": "high"}\n' > scored_bad.jsonl
printf '{"sentence1": "a", "sentence2": "b", "score": 0.5}\n{"sentence1": "c", "sentence2": "d"}\n' > scored_missing.jsonl
expect_usage_error "--embedding_loss: expected multiple_negatives_ranking, multiple_negatives_symmetric_ranking or cosent, got cosine" \
  --task=sentence_embedding --train_file=pairs.jsonl --embedding_loss=cosine
expect_usage_error "--embedding_columns: expected two distinct column names separated by a comma (the pair's texts) with --embedding_loss=cosent, got a,b,c" \
  --task=sentence_embedding --train_file=scored_bad.jsonl --embedding_loss=cosent --embedding_columns=a,b,c
expect_usage_error "--mini_batch_size: expected 0 with --embedding_loss=cosent" --task=sentence_embedding \
  --train_file=scored_bad.jsonl --embedding_loss=cosent --mini_batch_size=2
expect_usage_error "--train_file: expected a file of scored pairs with --embedding_loss=cosent" \
  --task=sentence_embedding --embedding_loss=cosent
expect_usage_error "scored_bad.jsonl:2: label 'high' is not a finite number" --task=sentence_embedding \
  --train_file=scored_bad.jsonl --embedding_loss=cosent
expect_usage_error "scored_missing.jsonl:2: no field 'score' (fields: sentence1, sentence2); set --label_column" --task=sentence_embedding \
  --train_file=scored_missing.jsonl --embedding_loss=cosent
# --task=cross_encoder: a training file, labels that are probabilities (the file and the line).
printf 'query\tpassage\tlabel\nq\tp\t1\nq\tr\t2\n' > reranking.tsv
expect_usage_error "--task: expected --train_file of text pairs with labels in [0, 1] for cross_encoder" --task=cross_encoder
expect_usage_error "reranking.tsv:3: label 2 is not in [0, 1] (--task=cross_encoder" --task=cross_encoder \
  --train_file=reranking.tsv --text_column=query --text_pair_column=passage
expect_usage_error "--label_smoothing_factor: expected 0 with --task=cross_encoder" --task=cross_encoder \
  --train_file=reranking.tsv --text_column=query --text_pair_column=passage --label_smoothing_factor=0.1
# --gather_across_devices: in-batch negatives only, uncached.
expect_usage_error "--gather_across_devices: expected false with --embedding_loss=cosent" --task=sentence_embedding \
  --train_file=scored_bad.jsonl --embedding_loss=cosent --gather_across_devices
expect_usage_error "--gather_across_devices: expected false with --mini_batch_size" --task=sentence_embedding \
  --train_file=pairs.jsonl --mini_batch_size=2 --gather_across_devices
# The metrics --metric_for_best_model accepts are those of the run's loss.
expect_usage_error "--metric_for_best_model: expected loss or one of pearson_cosine, spearman_cosine for --task=sentence_embedding, got cosine_ndcg@10" \
  --task=sentence_embedding --train_file=scored_bad.jsonl --embedding_loss=cosent --metric_for_best_model=cosine_ndcg@10
expect_usage_error "--metric_for_best_model: expected loss or one of cosine_accuracy@1" --task=sentence_embedding \
  --train_file=pairs.jsonl --metric_for_best_model=spearman_cosine
# Question answering's embedded example (recipes/data/langid_qa) is SQuAD v2: its preset
# --version_2_with_negative, turned off on the command line, leaves its unanswerable questions
# refused (question answering's other bad inputs: question_answering_test.sh).
expect_usage_error "train.jsonl:3: id 'train-0-es': no answer; unanswerable questions need --version_2_with_negative" \
  --task=question_answering --noversion_2_with_negative
# A model family this trainer does not have (RoBERTa's own cases: roberta_test.sh).
mkdir -p electra_model
printf '{"architectures": ["ElectraForSequenceClassification"], "model_type": "electra"}\n' > electra_model/config.json
expect_usage_error 'electra_model/config.json: model_type is "electra", expected one of "xlm-roberta", "roberta", "bert", "camembert"' \
  --model_dir=electra_model --train_file=train.tsv
expect_usage_error "train.tsv: unknown format for tagged sentences" --task=token_classification --train_file=train.tsv
expect_usage_error "train.tsv: unknown format for tagged sentences" --task=token_classification --train_file=tagged.conll \
  --eval_file=train.tsv
expect_usage_error "--text_pair_column" --task=token_classification --train_file=tagged.conll --text_pair_column=pair
expect_usage_error "untagged_line.conll:2:" --task=token_classification --train_file=untagged_line.conll
expect_usage_error "train.tsv:2: label 'pos' is not a finite number" --task=regression --train_file=train.tsv
expect_usage_error "--task" --task=regression   # no embedded regression data set
expect_usage_error "--label_smoothing_factor: expected 0 with --task=regression" --task=regression \
  --train_file=train.tsv --label_smoothing_factor=0.1
# What absl::ParseCommandLine rejects itself (with status 1 and several lines) is checked first.
expect_usage_error "--no_such_flag: unknown flag" --no_such_flag=3
expect_usage_error "--lerning_rate: unknown flag" --lerning_rate 1e-3
expect_usage_error "--learning_rate: invalid value 'fast'" --learning_rate=fast
expect_usage_error "--max_steps: invalid value '1.5'" --max_steps=1.5
expect_usage_error "--fp16: invalid value 'maybe'" --fp16=maybe
expect_usage_error "--nofp16: the negated form takes no value" --nofp16=true
expect_usage_error "--max_steps: missing value" --max_steps
expect_usage_error "unexpected argument 'train.tsv'" train.tsv
# The contents of a --flagfile (Abseil reads those itself and exits 1 with its own report):
# checked like the command line, the error naming the file and line.
printf -- '# tuned\n--train_file=train.tsv\n  --learning_rate=fast\n' > bad_value.flags
expect_usage_error "bad_value.flags:3: --learning_rate: invalid value 'fast'" --flagfile=bad_value.flags
printf -- '--train_file=train.tsv\n--lerning_rate=1e-3\n' > unknown.flags
expect_usage_error "unknown.flags:2: --lerning_rate: unknown flag" --flagfile=unknown.flags
printf -- '--train_file=train.tsv\n--max_steps\n' > missing_value.flags
expect_usage_error "missing_value.flags:2: --max_steps: missing value" --flagfile=missing_value.flags
printf -- '--train_file=train.tsv\ntrain.tsv\n' > positional.flags
expect_usage_error "positional.flags:2: expected a --flag, found 'train.tsv'" --flagfile=positional.flags
printf -- '--train_file=train.tsv\n--flagfile=unknown.flags\n' > nested.flags
expect_usage_error "unknown.flags:2: --lerning_rate: unknown flag" --flagfile=nested.flags
expect_usage_error "--flagfile=missing.flags: cannot open" --flagfile=missing.flags
printf -- '--flagfile=self.flags\n' > self.flags  # Abseil itself would recurse without end
expect_usage_error "flagfiles nested more than 16 deep" --flagfile=self.flags
# A flagfile's values still meet the program's own range checks.
printf -- '--per_device_train_batch_size=0\n' > range.flags
expect_usage_error "--per_device_train_batch_size" --train_file=train.tsv --flagfile=range.flags
# --fromenv, Abseil's other way to read flags elsewhere: the same.
expect_usage_error "--fromenv=learning_rate: FLAGS_learning_rate is not set" --train_file=train.tsv --fromenv=learning_rate
export FLAGS_learning_rate=fast
expect_usage_error "FLAGS_learning_rate: --learning_rate: invalid value 'fast'" --train_file=train.tsv --fromenv=learning_rate
unset FLAGS_learning_rate

# A flag set in a flagfile counts as given: the embedded default's presets (training_args.json,
# learning_rate 1.5e-3 among them) apply only to flags not given. --print_memory_plan stops
# before training, after the line that lists the presets applied.
printf -- '--learning_rate=1e-3\n' > lr.flags
rm -rf out
"$finetune" --output_dir=out --cache_dir=cache --flagfile=lr.flags --print_memory_plan > stdout.txt 2> stderr.txt
status=$?
presets=$(grep '^embedded default run: ' stderr.txt)
if [ "$status" -ne 0 ] || [ -z "$presets" ] || [[ "$presets" == *learning_rate=* ]]; then
  echo "FAILED for --flagfile=lr.flags: status $status, presets line '$presets' (learning_rate must not be among them):"
  cat stderr.txt
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] && echo "all bad inputs rejected"
exit "$failures"
