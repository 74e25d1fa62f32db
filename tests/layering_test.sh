#!/usr/bin/env bash
# docs/ARCHITECTURE.md's layering rules, checked: every line its three grep commands print (an
# include of kernels/ outside framework/ops, kernels/cpu and kernels/cuda including each other,
# a CUDA header outside kernels/cuda) must be a row of its exceptions table, and every row must
# still be needed. The table is the allowlist (each row names files, their includes and why), so
# the document and the test cannot disagree.
#
# Also the document's rule inside models/ (no table: it has no exceptions): a tokenizer folder
# includes no other tokenizer folder and nothing of models/encoder/, and models/encoder/ includes
# no tokenizer folder (models/tokenizers/*.h, shared by all, are not a folder).
#
# Catches: a new #include that goes around the diagram without a row (say framework/train
# including kernels/cpu/parallel.h), a row left behind after its include went away, and a
# tokenizer reaching into the encoder or another tokenizer (say wordpiece/bert_tokenizer.h
# including sentencepiece/sentencepiece_tokenizer.h for a helper).
#
# It reads the source tree itself, found through the document's runfile: see tests/BUILD.
set -euo pipefail

# The source tree (the current directory from here) and expand_braces.
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/source_tree.sh"

# The words in `backquotes` of one table cell, braces expanded.
cell_words() {
  grep -o '`[^`]*`' <<< "$1" | tr -d '`' | while read -r word; do expand_braces "$word"; done || true
}

# "file include" for every pair the table allows, from the rows under its header line.
allowed_pairs() {
  local header='| file | includes | why it goes around the diagram |'
  awk -v header="$header" '
    $0 == header { in_table = 1; next }
    in_table && !/^\|/ { exit }
    in_table && !/^\|---/ { print }' docs/ARCHITECTURE.md |
    while IFS='|' read -r _ files includes why _; do
      if [ -z "${why// /}" ]; then
        echo "FAIL: docs/ARCHITECTURE.md: the row for $files gives no reason" >&2
        echo "missing-reason"
        continue
      fi
      for file in $(cell_words "$files"); do
        for include in $(cell_words "$includes"); do echo "$file $include"; done
      done
    done
}

# "file include" for every line the document's three commands print, run from the tree's root.
actual_pairs() {
  {
    grep -rn '#include "kernels/' framework models recipes | grep -v '^framework/ops/' || true
    grep -rn '#include "kernels/cpu' kernels/cuda || true
    grep -rn '#include "kernels/cuda' kernels/cpu || true
    grep -rnE '#include <(cuda|cublas|nccl)' framework models recipes || true
  } | sed -E 's/^([^:]+):[0-9]+:#include ("([^"]+)"|(<[^>]+>)).*/\1 \3\4/'
}

allowed=$(allowed_pairs | sort -u)
actual=$(actual_pairs | sort -u)
[ -n "$allowed" ] || { echo "FAIL: docs/ARCHITECTURE.md has no layering table rows" >&2; exit 1; }
[[ $allowed != *missing-reason* ]] || exit 1

failures=0
while read -r file include; do
  [ -n "$file" ] || continue
  echo "FAIL: $file includes $include, which goes around the dependency diagram and is not a row" \
    "of docs/ARCHITECTURE.md's layering table: go through framework/ops (kernels/cuda for CUDA" \
    "headers), or add a row that says why" >&2
  failures=$((failures + 1))
done < <(comm -13 <(echo "$allowed") <(echo "$actual"))
while read -r file include; do
  [ -n "$file" ] || continue
  echo "FAIL: docs/ARCHITECTURE.md's layering table lists $file including $include, which it" \
    "no longer does: remove it from the row" >&2
  failures=$((failures + 1))
done < <(comm -23 <(echo "$allowed") <(echo "$actual"))

# The models/ rule: "file include" pairs that break it.
models_violations() {
  local folder
  for folder in models/tokenizers/*/; do
    grep -rn '#include "models/' "$folder" | grep -v "#include \"$folder" |
      grep -E '#include "models/(encoder|tokenizers/[^/"]+/)' || true
  done
  grep -rn '#include "models/tokenizers/[^/"]*/' models/encoder || true
}
while read -r line; do
  [ -n "$line" ] || continue
  echo "FAIL: $line: breaks docs/ARCHITECTURE.md's rule inside models/ (a tokenizer folder" \
    "includes no other one and nothing of models/encoder/, which includes no tokenizer folder)" >&2
  failures=$((failures + 1))
done < <(models_violations)

[ "$failures" -eq 0 ] || exit 1
echo "PASS: $(wc -l <<< "$actual") includes around the diagram, each a row of the table"
