#!/usr/bin/env bash
# tools/plot_metrics.py on a small metrics.jsonl of the contract's schema (an fp16 run with
# two skipped steps, evaluations, a summary): it writes one PNG of the size it draws
# (12 x 12 inches at 72 dpi). Every error is one line on stderr with exit status 2: matplotlib
# missing (hidden here by a stand-in package that fails to import), a line that is not JSON
# (named with its line number), a file without train records, a missing run directory.
# The PNG case needs matplotlib, a developer tool's dependency and not the trainer's: where it
# is not installed that case is reported as not run, and the error cases still run.
set -uo pipefail
plot="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
mkdir -p run
for step in 1 2 3 4 5 6; do
  skipped=false; norm=1.5; scale=65536.0
  if [ "$step" -le 2 ]; then skipped=true; norm=null; scale=$((131072 / (2 ** step))).0; fi
  echo "{\"type\":\"train\",\"step\":$step,\"epoch\":0.$step,\"loss\":2.$step,\"lr\":0.001,\"grad_norm\":$norm,\"loss_scale\":$scale,\"skipped\":$skipped,\"micro_steps\":1,\"examples\":$((8 * step)),\"tokens\":$((100 * step)),\"allreduce_calls\":$step,\"tokens_per_second\":1000.5,\"peak_activation_bytes\":1048576,\"peak_device_bytes\":4194304,\"peak_reserved_bytes\":null,\"elapsed_seconds\":0.$step}"
  [ "$step" -eq 3 ] || [ "$step" -eq 6 ] && echo "{\"type\":\"eval\",\"step\":$step,\"epoch\":0.$step,\"eval_loss\":2.0,\"eval_accuracy\":0.5,\"eval_macro_f1\":0.4,\"eval_examples\":10}"
done > run/metrics.jsonl
echo '{"type":"summary","steps":6,"skipped_steps":2,"train_seconds":0.6,"eval_loss":2.0,"eval_accuracy":0.5}' >> run/metrics.jsonl

# EXPECTED-SUBSTRING ARGS...: status 2 and one stderr line holding it.
expect_error() {
  local expected=$1; shift
  "$@" > stdout.txt 2> stderr.txt
  local status=$?
  if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || ! grep -qF -- "$expected" stderr.txt; then
    fail "$*: status $status, stderr: $(cat stderr.txt)"
  fi
}
mkdir -p no_matplotlib/matplotlib
echo 'raise ImportError("hidden by the test")' > no_matplotlib/matplotlib/__init__.py
expect_error "plot_metrics: needs matplotlib, which is not installed" env PYTHONPATH="$PWD/no_matplotlib" python3 "$plot" run
mkdir -p bad && sed '3s/.*/{"type":"train",/' run/metrics.jsonl > bad/metrics.jsonl
expect_error "bad/metrics.jsonl:3: not a JSON object" python3 "$plot" bad
mkdir -p evals_only && grep '"type":"eval"' run/metrics.jsonl > evals_only/metrics.jsonl
expect_error "no train records" python3 "$plot" evals_only
expect_error "no_such_run: no such run directory or metrics file" python3 "$plot" no_such_run
mkdir -p empty_run
expect_error "empty_run/metrics.jsonl: cannot read" python3 "$plot" empty_run
[ ! -e run/metrics.png ] || fail "an error case wrote run/metrics.png"

if python3 -c 'import matplotlib' 2> /dev/null; then
  python3 "$plot" run > stdout.txt 2> stderr.txt || fail "plotting failed: $(cat stderr.txt)"
  [ "$(cat stdout.txt)" = "run/metrics.png" ] || fail "expected the PNG's path on stdout, got $(cat stdout.txt)"
  size=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; print("%dx%d" % struct.unpack(">II", d[16:24]))' run/metrics.png) ||
    fail "run/metrics.png is not a PNG"
  [ "$size" = "864x864" ] || fail "run/metrics.png is $size, expected 864x864"
  echo "PNG written: run/metrics.png $size, $(stat -c %s run/metrics.png) bytes"
else
  echo "PNG case not run: matplotlib is not installed (pip install matplotlib)"
fi
[ "$failures" -eq 0 ] && echo "plot_metrics checked"
exit "$failures"
