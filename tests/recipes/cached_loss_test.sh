#!/usr/bin/env bash
# --mini_batch_size (the cached loss, GradCache) against the uncached loss through the binary, on
# the embedded sentence-embedding example (recipes/data/langid_bitext), dropout off, 50 steps of
# 32 rows, mini-batches of 8 texts (issue 43; each form is held to sentence-transformers by
# st_trainer_parity_test). Checked:
#   - every step's loss within 1e-5 relative (measured 4e-7: the loss and gradient are the same
#     function, summed over mini-batches in another order);
#   - the weights after 50 steps: max |difference| <= 1e-6 (measured 1.4e-7; --adam_epsilon=1e-4
#     so that elements whose gradient is rounding noise take no full-size steps);
#   - the cached step's peak activation bytes below the uncached step's (8 texts per pass
#     against 64).
# Args: xlmr_finetune, compare_models.
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
compare=$(absolute "$2")
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
for size in 0 8; do
  "$finetune" --task=sentence_embedding --dropout=0 --max_steps=50 --per_device_train_batch_size=32 \
    --mini_batch_size=$size --adam_epsilon=1e-4 --logging_steps=50 --save_strategy=no --eval_strategy=no \
    --cache_dir=cache --output_dir=run$size > run$size.log 2>&1 || { cat run$size.log; echo "FAILED: run $size"; exit 1; }
done
field() { grep '"type":"train"' "$1/metrics.jsonl" | sed -nE "s/.*\"$2\":([-0-9.e+]+).*/\1/p"; }
paste <(field run0 loss) <(field run8 loss) | awk '{ d = $1 - $2; if (d < 0) d = -d; r = d / $1; if (r > worst) worst = r }
  END { printf "losses of %d steps: worst relative difference %.3g (tolerance 1e-5)\n", NR, worst; exit !(NR == 50 && worst <= 1e-5) }' ||
  fail "the cached losses differ"
echo -n "weights after 50 steps: "
"$compare" run0/model.safetensors run8/model.safetensors --tolerance=1e-6 || fail "the cached weights differ"
uncached=$(field run0 peak_activation_bytes | sort -n | tail -1)
cached=$(field run8 peak_activation_bytes | sort -n | tail -1)
echo "peak activation bytes: uncached $uncached, cached $cached"
[ "$cached" -lt "$uncached" ] || fail "the cached step holds as much activation memory as the uncached one"
[ "$failures" -eq 0 ] && echo "the cached loss trains as the uncached one does"
exit "$failures"
