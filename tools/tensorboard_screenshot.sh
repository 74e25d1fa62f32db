#!/usr/bin/env bash
# Makes docs/images/tensorboard_default_run.png: the embedded default run with
# --report_to=tensorboard, shown by TensorBoard (PyPI) and photographed by headless Chromium
# (Debian's chromium). Not part of CI; needs PyPI for TensorBoard.
#
#   tools/tensorboard_screenshot.sh [extra flags for xlmr_finetune]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
dpkg-query -W -f='${Status}' chromium 2> /dev/null | grep -q "install ok installed" \
  || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo; $SUDO apt-get install -y -qq --no-install-recommends chromium; }
site="${XDG_CACHE_HOME:-$HOME/.cache}/xlmr_trainer/tensorboard_site"
PYTHONPATH="$site" /usr/bin/python3 -c "import tensorboard, numpy" 2> /dev/null \
  || /usr/bin/python3 -m pip install --quiet --target "$site" tensorboard numpy
bazel build //recipes:xlmr_finetune -c opt
work=$(mktemp -d)
trap 'kill "${server:-0}" 2> /dev/null || true; rm -rf "$work"' EXIT
bazel-bin/recipes/xlmr_finetune --output_dir="$work/run" --report_to=tensorboard --logging_steps=25 "$@"
PYTHONPATH="$site" /usr/bin/python3 -m tensorboard.main --logdir "$work/run/runs" --port 6123 \
  --host 127.0.0.1 > "$work/tensorboard.log" 2>&1 &
server=$!
until curl -s -o /dev/null http://127.0.0.1:6123/; do
  kill -0 "$server" 2> /dev/null || { cat "$work/tensorboard.log"; exit 1; }
  sleep 0.5
done
mkdir -p docs/images
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1500,1100 \
  --virtual-time-budget=20000 --screenshot="$repo/docs/images/tensorboard_default_run.png" \
  "http://127.0.0.1:6123/#scalars&tagFilter=train%2Floss%7Clearning_rate%7Ceval%2Floss%7Ceval%2Faccuracy&_smoothingWeight=0" 2> /dev/null
echo "wrote docs/images/tensorboard_default_run.png"
