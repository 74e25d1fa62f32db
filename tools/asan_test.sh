#!/usr/bin/env bash
# Runs the test suite (or the targets given) under AddressSanitizer + UndefinedBehaviorSanitizer
# (--config=asan, CPU backend), with the leak suppressions for Open MPI's own allocations.
#   tools/asan_test.sh [bazel test flags and targets; default //...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -gt 0 ] || set -- //...
exec bazel test --config=asan --test_env=LSAN_OPTIONS="suppressions=$PWD/tools/lsan_suppressions.txt" "$@"
