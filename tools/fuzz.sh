#!/usr/bin/env bash
# Fuzzes every reader of untrusted bytes with libFuzzer under ASan + UBSan:
#
#   bash tools/fuzz.sh [RUNS] [TARGET...]
#
# RUNS inputs per target (default 1000000); targets: safetensors record_reader config
# trainer_state (default: all). Each starts from its seeds in tests/fuzz/corpus/<target>
# and keeps what it finds in fuzz_out/<target>/corpus; a crash, leak or sanitizer report
# stops it with the input saved under fuzz_out/<target>/ (add that file to
# tests/fuzz/corpus/<target> once fixed: the <target>_corpus_test replays it from then on).
# Exit status: 0 no finding; 1 a finding; 2 clang-14 / libFuzzer missing
# (bash tools/fuzz_bootstrap.sh installs them).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors record_reader config trainer_state)
if ! command -v clang-14 > /dev/null; then
  echo "tools/fuzz.sh: clang-14 not found; run bash tools/fuzz_bootstrap.sh" >&2
  exit 2
fi
binaries=()
for target in "${targets[@]}"; do binaries+=("//tests/fuzz:${target}_fuzzer"); done
bazel build --config=fuzz "${binaries[@]}" || { echo "tools/fuzz.sh: build failed" >&2; exit 2; }
status=0
for target in "${targets[@]}"; do
  out="fuzz_out/$target"
  mkdir -p "$out/corpus"
  # Inputs above 64 KiB add nothing the readers' size checks have not seen.
  if ! ASAN_OPTIONS=detect_leaks=1 "bazel-bin/tests/fuzz/${target}_fuzzer" -runs="$runs" -max_len=65536 \
      -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" "tests/fuzz/corpus/$target" \
      > "$out/log.txt" 2>&1; then
    echo "$target: FINDING, see $out/log.txt"
    status=1
  else
    echo "$target: $(grep -m1 'stat::number_of_executed_units' "$out/log.txt" | awk '{print $2}') executions, no finding"
  fi
done
exit "$status"
