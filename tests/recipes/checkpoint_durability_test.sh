#!/usr/bin/env bash
# Durability order of a checkpoint and of the final model (framework/io/durable_file.h), seen
# in the system calls of the real binary: strace -f -y records every fsync (with the path of
# its descriptor) and rename in the order the trainer issues them (one thread saves). For each
# checkpoint-N of an 8-step run saving every 4 steps it requires, before the rename of
# checkpoint-N.tmp-PID to checkpoint-N: an fsync of every file the checkpoint holds, manifest.json
# renamed into place after the last of them, and an fsync of the temporary directory after
# that; and an fsync of the output directory after the rename. For the final model: every file
# of its manifest fsynced, then the manifest renamed into place, then the output directory
# fsynced. For --overwrite_output_dir: the parent directory fsynced after the exchange of the
# staged run with the old one. What it catches: a file written but not flushed (config.json,
# trainer_state.json, the tokenizer copy), the manifest written after the rename, a directory
# not flushed.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
command -v strace > /dev/null || { echo "FAILED: strace is not installed (tools/bootstrap.sh installs it)"; exit 1; }
head -n 101 "$RUNFILES_DIR/xlmr_trainer/recipes/data/langid/dev.tsv" > heldout.tsv
out="$TEST_TMPDIR/out"
cmd=(--eval_file=heldout.tsv --cache_dir="$TEST_TMPDIR/cache" --max_steps=8 --save_steps=4
     --per_device_train_batch_size=4 --save_total_limit=0)
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
traced() {  # TRACE FLAGS...: the recipe under strace
  local trace=$1; shift
  strace -f -y -qq -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$trace" "$finetune" "$@" > "$trace.log" 2>&1
  status=$?
  [ "$status" -eq 0 ] || { cat "$trace.log"; fail "traced run ($*): status $status"; exit 1; }
}
# TRACE TEXT [AFTER]: the number of the first line of TRACE after line AFTER (default 0) that
# contains TEXT, or 0 when there is none.
line_of() {
  awk -v text="$2" -v after="${3:-0}" 'NR > after && index($0, text) { print NR; found = 1; exit } END { if (!found) print 0 }' "$1"
}
# TRACE PATH [AFTER]: the first line after AFTER with an fsync of PATH (strace -y prints the
# descriptor's path as "fsync(4</dir/file>)"), or 0.
fsync_line() {
  awk -v text="<$2>)" -v after="${3:-0}" \
    'NR > after && index($0, "fsync(") && index($0, text) { print NR; found = 1; exit } END { if (!found) print 0 }' "$1"
}

traced trace.txt "${cmd[@]}" --output_dir="$out"
grep -q "fsync(" trace.txt || { head trace.txt; fail "no fsync traced at all (strace cannot trace here?)"; exit 1; }

for step in 4 8; do
  final="$out/checkpoint-$step"
  rename=$(grep -n -E -m1 "rename\(\"$out/checkpoint-$step\.tmp-[0-9]+\", \"$final\"\)" trace.txt | cut -d: -f1)
  [ -n "$rename" ] || { fail "checkpoint-$step: no rename of its temporary directory traced"; continue; }
  temp=$(sed -n "${rename}p" trace.txt | sed -E 's/.*rename\("([^"]+)".*/\1/')
  last_file=0
  for file in $(ls "$final"); do
    [ "$file" = manifest.json ] && continue
    at=$(fsync_line trace.txt "$temp/$file")
    if [ "$at" -eq 0 ] || [ "$at" -gt "$rename" ]; then fail "checkpoint-$step: $file not fsynced before the rename"; continue; fi
    [ "$at" -gt "$last_file" ] && last_file=$at
  done
  manifest=$(line_of trace.txt "rename(\"$temp/manifest.json.tmp\", \"$temp/manifest.json\")")
  if [ "$manifest" -eq 0 ] || [ "$manifest" -gt "$rename" ] || [ "$manifest" -lt "$last_file" ]; then
    fail "checkpoint-$step: manifest.json not renamed into place after the files' fsyncs and before the checkpoint's rename (lines: files $last_file, manifest $manifest, rename $rename)"
  fi
  directory=$(fsync_line trace.txt "$temp" "$manifest")
  if [ "$directory" -eq 0 ] || [ "$directory" -gt "$rename" ]; then
    fail "checkpoint-$step: its directory not fsynced between the manifest and the rename"
  fi
  parent=$(fsync_line trace.txt "$out" "$rename")
  [ "$parent" -gt 0 ] || fail "checkpoint-$step: the output directory not fsynced after the rename"
  echo "checkpoint-$step: $(ls "$final" | wc -l) files fsynced (last at trace line $last_file), manifest $manifest, directory $directory, rename $rename, output directory $parent"
done

# The final model: its manifest's files, then the manifest, then the directory.
manifest=$(line_of trace.txt "rename(\"$out/manifest.json.tmp\", \"$out/manifest.json\")")
[ "$manifest" -gt 0 ] || fail "final model: manifest.json never renamed into place"
for file in config.json model.safetensors sentencepiece.bpe.model eval_results.json trainer_state.json; do
  grep -q "\"name\":\"$file\"" "$out/manifest.json" || fail "final model: manifest.json does not list $file"
  at=$(fsync_line trace.txt "$out/$file")
  [ "$at" -gt 0 ] && [ "$at" -lt "$manifest" ] || fail "final model: $file not fsynced before its manifest"
done
directory=$(fsync_line trace.txt "$out" "$manifest")
[ "$directory" -gt 0 ] || fail "final model: the output directory not fsynced after its manifest"
echo "final model: files fsynced, manifest at trace line $manifest, output directory at $directory"

# --overwrite_output_dir: the staged run takes out/'s place; the parent records the exchange.
traced overwrite.txt "${cmd[@]}" --max_steps=4 --output_dir="$out" --overwrite_output_dir
exchange=$(grep -n -m1 -E "renameat2\(AT_FDCWD[^,]*, \"$out.overwriting\", AT_FDCWD[^,]*, \"$out\", RENAME_EXCHANGE\)" overwrite.txt | cut -d: -f1)
if [ -z "$exchange" ]; then
  fail "--overwrite_output_dir: no exchange traced"
else
  parent=$(fsync_line overwrite.txt "$TEST_TMPDIR" "$exchange")
  [ "$parent" -gt 0 ] || fail "--overwrite_output_dir: the parent directory not fsynced after the exchange"
  echo "--overwrite_output_dir: exchange at trace line $exchange, parent directory fsynced at $parent"
fi

[ "$failures" -eq 0 ] && echo "every file and directory reached the disk before the rename that published it"
exit "$failures"
