#!/usr/bin/env bash
# XLMR_REQUIRE_GPU on a machine without a usable GPU (the build machine), through one GPU test
# binary (the NCCL communicator test, which decides with XLMR_SKIP_WITHOUT_GPU as every test in
# tests/gpu does):
#  - without the variable the binary skips its tests and exits 0 (a build machine stays green);
#  - with XLMR_REQUIRE_GPU=1 it exits non-zero and says why.
# On a machine WITH a GPU this test cannot hold (the binary passes either way): it says so and
# fails, since its premise, no GPU, is wrong there; gpu_verify runs tests/gpu with the variable set.
set -uo pipefail
binary="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"

if command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
  echo "a GPU is visible here: this test checks the no-GPU behaviour and does not apply"
  exit 1
fi

env -u XLMR_REQUIRE_GPU "$binary" > plain.log 2>&1
status=$?
[ "$status" -eq 0 ] || { cat plain.log; echo "without XLMR_REQUIRE_GPU: exit $status, expected 0"; exit 1; }
grep -q '^\[  SKIPPED \] ' plain.log || { cat plain.log; echo "without XLMR_REQUIRE_GPU: no test skipped"; exit 1; }
grep -q '^\[  PASSED  \] 0 tests' plain.log || { cat plain.log; echo "without XLMR_REQUIRE_GPU: some test ran"; exit 1; }

XLMR_REQUIRE_GPU=1 "$binary" > required.log 2>&1
status=$?
[ "$status" -ne 0 ] || { cat required.log; echo "XLMR_REQUIRE_GPU=1: exit 0, expected a failure"; exit 1; }
grep -q 'XLMR_REQUIRE_GPU=1 but there is no usable GPU: no GPU' required.log \
  || { cat required.log; echo "XLMR_REQUIRE_GPU=1: the failure does not give the reason"; exit 1; }
grep -q '^\[  SKIPPED \] ' required.log && { cat required.log; echo "XLMR_REQUIRE_GPU=1: a test still skipped"; exit 1; }
echo "no GPU: skipped without XLMR_REQUIRE_GPU, failed (exit $status) with it"
