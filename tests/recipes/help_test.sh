#!/usr/bin/env bash
# --help, -h, --helpshort, --helpfull and --version of both binaries, as Abseil prints them:
# exit status 0, nothing on stderr, nothing written, and the text a user needs: the usage line,
# the program's flags each with its help text and default (--helpfull: Abseil's flags too), the
# program and its build. An unknown flag still stops with one line and exit status 2, even
# beside --help. Catches the command-line check rejecting Abseil's usage flags as unknown (it
# did, in both binaries), help exiting 1 as absl::ParseCommandLine would, and a help that lists
# no flags (Abseil's default --help lists only flags defined in <program>.cc).
# Args: xlmr_finetune, xlmr_predict.
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# Runs "$@" in an empty directory; stdout.txt, stderr.txt and $status hold what it did.
run() {
  rm -rf work && mkdir work
  (cd work && "$@" > ../stdout.txt 2> ../stderr.txt)
  status=$?
  [ -z "$(ls -A work)" ] || fail "$*: wrote $(ls -A work | tr '\n' ' ')"
}

# The usage flags that print help: the usage line, then flags that name their defaults.
# $1: the binary, $2: its name, $3: the flags the help must list (one of its own, a shared one).
check_help() {
  local binary="$1" name="$2" listed="$3"
  for flag in --help -h --helpshort --helpfull; do
    run "$binary" "$flag"
    [ "$status" -eq 0 ] || fail "$name $flag: exit status $status, expected 0"
    [ ! -s stderr.txt ] || fail "$name $flag: wrote to stderr: $(head -3 stderr.txt)"
    head -1 stdout.txt | grep -q "^$name: [a-z]" || fail "$name $flag: no usage line first: $(head -1 stdout.txt)"
    for wanted in $listed; do
      grep -Eq "^    --$wanted \(.+" stdout.txt || fail "$name $flag: --$wanted not listed with its help"
    done
    # Every flag's entry ends with its default (Abseil writes "default: <value>;").
    local entries defaults
    entries=$(grep -c '^    --' stdout.txt)
    defaults=$(grep -c 'default: .*;$' stdout.txt)
    [ "$entries" -gt 5 ] && [ "$entries" -eq "$defaults" ] ||
      fail "$name $flag: $entries flags listed, $defaults defaults"
    if [ "$flag" = --helpfull ]; then
      grep -q '^    --flagfile ' stdout.txt || fail "$name --helpfull: Abseil's --flagfile not listed"
    else
      ! grep -q '^    --flagfile ' stdout.txt || fail "$name $flag: lists Abseil's own flags (--helpfull's job)"
    fi
  done
  run "$binary" -h && cp stdout.txt short_h.txt
  run "$binary" --help
  cmp -s stdout.txt short_h.txt || fail "$name: -h printed other text than --help"
}

check_version() {
  local binary="$1" name="$2"
  run "$binary" --version
  [ "$status" -eq 0 ] || fail "$name --version: exit status $status, expected 0"
  [ ! -s stderr.txt ] || fail "$name --version: wrote to stderr"
  # The second line's contents are run_record_test's subject.
  [ "$(wc -l < stdout.txt)" -eq 2 ] && head -n 1 stdout.txt | grep -q "^$name (xlmr_trainer): " &&
    sed -n 2p stdout.txt | grep -q "^CPU GEMM: OpenBLAS " ||
    fail "$name --version: expected '$name (xlmr_trainer): ...' and 'CPU GEMM: OpenBLAS ...', got: $(cat stdout.txt)"
}

check_unknown_flag() {
  local binary="$1" name="$2"
  for flags in "--no_such_flag" "--help --no_such_flag"; do
    # shellcheck disable=SC2086  # two words, two arguments
    run "$binary" $flags
    [ "$status" -eq 2 ] && [ "$(wc -l < stderr.txt)" -eq 1 ] &&
      grep -q "^$name: --no_such_flag: unknown flag" stderr.txt && [ ! -s stdout.txt ] ||
      fail "$name $flags: status $status, expected 2 and one line naming the flag: $(cat stderr.txt)"
  done
}

check_help "$finetune" xlmr_finetune "learning_rate max_seq_length fp16 model_dir"
check_help "$predict" xlmr_predict "input_file output_dir max_seq_length doc_stride fp16 model_dir"
check_version "$finetune" xlmr_finetune
check_version "$predict" xlmr_predict
check_unknown_flag "$finetune" xlmr_finetune
check_unknown_flag "$predict" xlmr_predict
# The usage line speaks of every task.
run "$finetune" --help
head -1 stdout.txt | grep -q "sequence classification, regression, token classification, question answering, sentence embeddings or reranking" ||
  fail "xlmr_finetune --help: the usage line does not name every task: $(head -1 stdout.txt)"

[ "$failures" -eq 0 ] && echo "help test passed"
exit "$failures"
