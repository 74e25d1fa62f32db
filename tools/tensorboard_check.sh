#!/usr/bin/env bash
# Runs //tests/recipes:tensorboard_test with TensorBoard's own reader: installs the tensorboard
# package (and numpy, which its reader imports) from PyPI into a directory of the user's cache,
# puts it on the test's PYTHONPATH, and checks that the test said it read the files with
# TensorBoard's EventAccumulator. Needs PyPI, so it is not part of CI (which reads the same
# files with the protobuf runtime from Debian's archive; tests/recipes/read_tensorboard.py).
#
#   tools/tensorboard_check.sh [extra bazel flags, e.g. --disk_cache=...]
set -euo pipefail
cd "$(dirname "$0")/.."
site="${XDG_CACHE_HOME:-$HOME/.cache}/xlmr_trainer/tensorboard_site"
if ! PYTHONPATH="$site" /usr/bin/python3 -c "import tensorboard, numpy" 2> /dev/null; then
  /usr/bin/python3 -m pip install --quiet --target "$site" tensorboard numpy 2> /dev/null \
    || python3 -m pip install --quiet --target "$site" tensorboard numpy
fi
bazel test //tests/recipes:tensorboard_test --test_env=PYTHONPATH="$site" --nocache_test_results "$@"
log="$(bazel info bazel-testlogs "$@" 2> /dev/null)/tests/recipes/tensorboard_test/test.log"
grep "read by: tensorboard EventAccumulator" "$log" || { echo "the test did not use TensorBoard's reader"; exit 1; }
grep -E "^(whole|resumed|flags):" "$log"
