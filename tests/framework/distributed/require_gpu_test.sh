#!/usr/bin/env bash
# XLMR_REQUIRE_GPU through one GPU test binary (the NCCL communicator test, which decides with
# XLMR_SKIP_WITHOUT_GPU as every test in tests/gpu does).
# Without a usable GPU (the build machine):
#  - without the variable the binary skips its tests and exits 0 (a build machine stays green);
#  - with XLMR_REQUIRE_GPU=1 it exits non-zero and says why.
# With a GPU, the binary runs its tests either way and XLMR_REQUIRE_GPU=1 changes nothing.
set -uo pipefail
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"

env -u XLMR_REQUIRE_GPU "$binary" > plain.log 2>&1
status=$?
[ "$status" -eq 0 ] || { cat plain.log; echo "without XLMR_REQUIRE_GPU: exit $status, expected 0"; exit 1; }
XLMR_REQUIRE_GPU=1 "$binary" > required.log 2>&1
required_status=$?

if ! grep -q '^\[  SKIPPED \] ' plain.log; then
  # A GPU is there: both runs must run and pass every test.
  grep -q '^\[  PASSED  \] [1-9]' plain.log || { cat plain.log; echo "no test skipped, and none passed"; exit 1; }
  [ "$required_status" -eq 0 ] && ! grep -q '^\[  SKIPPED \] ' required.log ||
    { cat required.log; echo "with a GPU, XLMR_REQUIRE_GPU=1 must pass as the plain run did"; exit 1; }
  echo "GPU present: the tests ran and passed with and without XLMR_REQUIRE_GPU=1"
  exit 0
fi

grep -q '^\[  PASSED  \] 0 tests' plain.log || { cat plain.log; echo "without XLMR_REQUIRE_GPU: some tests ran, some skipped"; exit 1; }
[ "$required_status" -ne 0 ] || { cat required.log; echo "XLMR_REQUIRE_GPU=1: exit 0, expected a failure"; exit 1; }
grep -q 'XLMR_REQUIRE_GPU=1 but there is no usable GPU: no GPU' required.log \
  || { cat required.log; echo "XLMR_REQUIRE_GPU=1: the failure does not give the reason"; exit 1; }
! grep -q '^\[  SKIPPED \] ' required.log || { cat required.log; echo "XLMR_REQUIRE_GPU=1: a test still skipped"; exit 1; }
echo "no GPU: skipped without XLMR_REQUIRE_GPU, failed (exit $required_status) with it"
