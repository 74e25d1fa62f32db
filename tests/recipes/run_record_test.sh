#!/usr/bin/env bash
# What runs the CPU's products, as metrics.jsonl's first line and --version of both binaries
# name it (docs/CONTRACT.md), held to expectations from outside the binaries: the core OpenBLAS
# reports to a separate process (python3's ctypes on the libopenblas the binary loads), the core
# OPENBLAS_CORETYPE forces, the thread count OPENBLAS_NUM_THREADS sets (as OpenBLAS caps it at
# the cores), and the CPU's features
# as /proc/cpuinfo lists them. Nothing of it goes to stderr.
set -uo pipefail
finetune="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
predict="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
cd "$TEST_TMPDIR"
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# The libopenblas the binary loads, and what OpenBLAS itself says in a process of its own
# (corename, config, num_threads: OPENBLAS_NUM_THREADS as OpenBLAS caps it).
library=$(ldd "$finetune" | sed -nE 's/.*=> (\/[^ ]*libopenblas[^ ]*) .*/\1/p' | head -n 1)
[ -n "$library" ] || library=libopenblas.so.0
openblas() {  # WHAT (corename | config) -> OpenBLAS's answer under the current environment
  python3 -c "import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
getter = getattr(lib, 'openblas_get_' + sys.argv[2])
if sys.argv[2] != 'num_threads': getter.restype = ctypes.c_char_p
value = getter()
print(value if sys.argv[2] == 'num_threads' else value.decode())" "$library" "$1"
}
# The CPU's features among those the line names, in its order, as the kernel lists them.
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
features=""
for feature in avx2 fma avx512f avx512_bf16 amx_tile amx_bf16; do
  case "$flags" in *" $feature "*) features="${features:+$features }$feature" ;; esac
done
kernels=scalar
case "$flags" in *" avx512f "*) kernels=avx512 ;; *" avx2 "*) kernels=avx2 ;; esac
auto_core=$(OPENBLAS_NUM_THREADS=2 openblas corename)
# A core this CPU runs other than the one OpenBLAS picks (so that no fixed name passes both).
candidates=(Nehalem Prescott)
case "$flags" in *" avx2 "*) candidates=(Haswell Sandybridge "${candidates[@]}") ;; *" avx "*) candidates=(Sandybridge "${candidates[@]}") ;; esac
for forced in "${candidates[@]}"; do [ "$forced" != "$auto_core" ] && break; done
auto_config=$(OPENBLAS_NUM_THREADS=2 openblas config)
auto_threads=$(OPENBLAS_NUM_THREADS=2 openblas num_threads)  # 2, or 1 on a machine with one core
forced_config=$(OPENBLAS_CORETYPE=$forced OPENBLAS_NUM_THREADS=1 openblas config)
[ -n "$auto_core" ] && [ -n "$auto_config" ] || fail "ctypes on $library: no core or configuration"
[ "$(OPENBLAS_CORETYPE=$forced openblas corename)" = "$forced" ] || fail "OpenBLAS ignores OPENBLAS_CORETYPE=$forced"
echo "OpenBLAS ($library): $auto_config; forced: $forced; CPU: ${features:-none}; kernels: $kernels"

# CORETYPE THREADS CONFIG CORE: --version of both binaries under that environment.
check_version() {
  local coretype="$1" threads="$2" config="$3" core="$4" name binary
  local suffix="s"; [ "$threads" -eq 1 ] && suffix=""
  local expected="CPU GEMM: $config; core $core; $threads thread$suffix; CPU: ${features:-none}; kernels: $kernels"
  for name in xlmr_finetune xlmr_predict; do
    binary=$finetune; [ "$name" = xlmr_predict ] && binary=$predict
    env ${coretype:+OPENBLAS_CORETYPE=$coretype} OPENBLAS_NUM_THREADS="$threads" "$binary" --version \
      > version.out 2> version.err || fail "$name --version exited $?"
    [ ! -s version.err ] || fail "$name --version wrote to stderr: $(head -n 2 version.err)"
    [ "$(sed -n 2p version.out)" = "$expected" ] ||
      fail "$name --version (OPENBLAS_CORETYPE='$coretype'): got '$(sed -n 2p version.out)', expected '$expected'"
  done
}
check_version "" "$auto_threads" "$auto_config" "$auto_core"
check_version "$forced" 1 "$forced_config" "$forced"

# CORETYPE THREADS CONFIG CORE: one training step; metrics.jsonl's first line.
check_metrics() {
  local coretype="$1" threads="$2" config="$3" core="$4" out="out_${1:-auto}"
  env ${coretype:+OPENBLAS_CORETYPE=$coretype} OPENBLAS_NUM_THREADS="$threads" "$finetune" --max_steps=1 \
    --eval_strategy=no --cache_dir=cache --output_dir="$out" > "$out.log" 2>&1 ||
    { fail "training (OPENBLAS_CORETYPE='$coretype') exited $?: $(tail -n 3 "$out.log")"; return; }
  ! grep -qE "OpenBLAS|$core" "$out.log" || fail "the run's stderr names the GEMM library: $(grep -E "OpenBLAS|$core" "$out.log")"
  python3 - "$out/metrics.jsonl" "$config" "$core" "$threads" "${features}" "$kernels" <<'PY' || fail "metrics.jsonl's first line (OPENBLAS_CORETYPE='$coretype')"
import json, sys
path, config, core, threads, features, kernels = sys.argv[1:]
lines = open(path).read().splitlines()
first = json.loads(lines[0])
expected = {"type": "run", "cpu_gemm_library": "OpenBLAS", "cpu_gemm_config": config, "cpu_gemm_core": core,
            "cpu_threads": int(threads), "cpu_features": features, "cpu_kernels_isa": kernels}
if first != expected:
    sys.exit(f"got {lines[0]}\nexpected {json.dumps(expected)}")
if sum(json.loads(line)["type"] == "run" for line in lines) != 1 or json.loads(lines[1])["type"] != "train":
    sys.exit("expected one run record, then the train record")
PY
}
check_metrics "" "$auto_threads" "$auto_config" "$auto_core"
check_metrics "$forced" 1 "$forced_config" "$forced"
sed -n 1p out_auto/metrics.jsonl

[ "$failures" -eq 0 ] && echo "run record test passed"
exit "$failures"
