#!/usr/bin/env bash
# Installs every Debian package the project needs to build and test. Idempotent: packages
# already present are left alone and apt-get update runs only when something is missing.
# The CUDA toolkit is not a Debian package here; without /usr/local/cuda the CUDA backend
# is skipped automatically (see third_party/cuda_configure.bzl).
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-rules-java bazel-platforms   # Bazel 4.2.3 and its offline rules
  g++ pkg-config                                     # toolchain; pkg-config describes the libs
  libabsl-dev                                        # flags, status, strings
  googletest libgtest-dev libgmock-dev               # tests
  libsentencepiece-dev sentencepiece                 # tokenizer (library + spm_train/spm_encode)
  nlohmann-json3-dev                                 # JSON
  libisal-dev                                        # CRC32C of checkpoint files (Intel ISA-L)
  libutf8proc-dev                                    # Unicode normalisation and categories (BERT and RoBERTa tokenizers)
  libopenblas-dev                                    # CPU GEMM
  libdnnl-dev libblis-dev                            # CPU GEMM candidates (bench/gemm_bench.cc)
  libopenmpi-dev openmpi-bin                         # mpirun and the MPI communicator
  strace                                             # tests: fsync before rename (checkpoint_durability_test)
  xz-utils                                           # the GPU kit's bundle (tools/gpu_verify.sh kit)
  python3-protobuf python3-crcmod                    # tests: event files read without TensorBoard (tensorboard_test)
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#PACKAGES[@]} packages already installed"
else
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "bootstrap: installed ${#missing[@]} package(s)"
fi

if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "bootstrap: CUDA toolkit found at /usr/local/cuda (CUDA backend will be built)"
else
  echo "bootstrap: no CUDA toolkit at /usr/local/cuda (building the CPU backend only)"
fi
