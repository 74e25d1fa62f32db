#!/usr/bin/env bash
# gemm_bench --quick: tiny shapes through every library (OpenBLAS over the pool and threaded,
# oneDNN's sgemm and matmul, BLIS); each result must match OpenBLAS's. Exit status and the
# "check: pass" line both count.
set -euo pipefail
bench="${TEST_SRCDIR}/${TEST_WORKSPACE}/bench/gemm_bench"
for threads in 1 2; do
  out="$(OPENBLAS_NUM_THREADS=$threads "$bench" --quick)" || { echo "$out"; echo "FAIL: exit status, threads $threads"; exit 1; }
  echo "$out"
  grep -q "^threads: $threads" <<<"$out" || { echo "FAIL: thread count not $threads"; exit 1; }
  grep -q "^check: pass" <<<"$out" || { echo "FAIL: no 'check: pass'"; exit 1; }
  # One table row per case, each with five GFLOP/s cells and no FAILED mark.
  rows="$(grep -c '^| tiny\|^| attn\|^| square' <<<"$out")"
  [ "$rows" -eq 9 ] || { echo "FAIL: $rows rows, want 9"; exit 1; }
  ! grep -q FAILED <<<"$out" || { echo "FAIL: a library disagrees with OpenBLAS"; exit 1; }
  grep -q "bli_sgemm from .*libblis" <<<"$out" || { echo "FAIL: bli_sgemm not from libblis"; exit 1; }
  grep -q "cblas_sgemm from .*libopenblas" <<<"$out" || { echo "FAIL: cblas_sgemm not from OpenBLAS"; exit 1; }
done
echo PASS
