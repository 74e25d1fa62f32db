#!/usr/bin/env bash
# Installs what tools/fuzz.sh needs beyond tools/bootstrap.sh: clang-14 and libFuzzer
# (Debian 12 packages). Does nothing when they are there. Not part of the build's bootstrap
# (building and testing need neither); .ci/run calls it before its fuzz smoke run.
set -euo pipefail
if command -v clang-14 > /dev/null && ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1; then
  echo "clang-14 and libFuzzer are installed"
  exit 0
fi
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
echo "fuzz_bootstrap: installing clang-14 libfuzzer-14-dev"
sudo_if_needed apt-get update -qq
sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-14 libfuzzer-14-dev > /dev/null
