#!/usr/bin/env bash
# The embedded question-answering data is what its generator writes: make_langid_qa_dataset.py
# run twice on langid gives byte-identical files (no randomness), equal to the committed
# recipes/data/langid_qa/{train,dev,test}.jsonl. Python's standard library only.
# Args: the generator, langid's train.tsv, langid_qa's train.jsonl (their directories hold
# the other splits).
set -uo pipefail
absolute_dir() { cd "$(dirname "$1")" && pwd; }
generator="$(absolute_dir "$1")/$(basename "$1")"
langid_dir="$(absolute_dir "$2")"
committed_dir="$(absolute_dir "$3")"
cd "$TEST_TMPDIR"
fail() { echo "FAILED: $*"; exit 1; }
for run in first second; do
  python3 "$generator" --langid_dir="$langid_dir" --out_dir="$run" > "$run.txt" 2>&1 || fail "$run run: $(cat "$run.txt")"
done
for split in train dev test; do
  cmp -s "first/$split.jsonl" "second/$split.jsonl" || fail "$split.jsonl differs between two runs"
  cmp -s "first/$split.jsonl" "$committed_dir/$split.jsonl" ||
    fail "$split.jsonl differs from the committed recipes/data/langid_qa/$split.jsonl (regenerate it)"
done
cat first.txt
echo "PASSED"
