#!/usr/bin/env bash
# Installs what tools/fuzz.sh needs beyond tools/bootstrap.sh: clang-14 and libFuzzer
# (Debian 12 packages). Does nothing when they are there. Not part of the build's bootstrap:
# fuzzing is a developer's and a scheduled job's task, not every build's.
set -euo pipefail
if command -v clang-14 > /dev/null && ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1; then
  echo "clang-14 and libFuzzer are installed"
  exit 0
fi
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
sudo_if_needed apt-get update
sudo_if_needed apt-get install -y --no-install-recommends clang-14 libfuzzer-14-dev
