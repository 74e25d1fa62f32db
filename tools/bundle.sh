#!/usr/bin/env bash
# Builds binaries with `bazel build -c opt` and packs them into one relocatable folder for a GPU
# host that has the NVIDIA driver and CUDA libraries but no Bazel (see docs on GPU hosts).
#
#   tools/bundle.sh [BAZEL_FLAG...] TARGET... OUT_DIR
#   tools/bundle.sh //tests/gpu:cast_test //recipes:xlmr_finetune /tmp/xlmr_bundle
#   # copy /tmp/xlmr_bundle to the GPU host, then:
#   /path/to/xlmr_bundle/run.sh tests/gpu/cast_test --gtest_brief=1
#
# OUT_DIR gets:
#   <package>/<name>.runfiles/   each binary's runfiles tree, symlinks resolved (the binary itself
#                                sits inside it, next to its data files)
#   lib/                         the shared libraries the binaries need, except glibc and the CUDA
#                                libraries (libcuda, libcudart, libcublas*, libnccl*, libcudnn*):
#                                the GPU host has its own, and cuBLASLt alone is over 500 MB
#   run.sh                       the launcher: run.sh BINARY [ARGS...]
#   BINARIES, BUNDLE_INFO        what is inside and how it was built
# Arguments starting with '-' are passed to bazel (e.g. --config=cpu), except --bin_dir=DIR:
# no build, the binaries and their runfiles trees are taken from DIR laid out as bazel-bin
# (DIR/<package>/<name> and DIR/<package>/<name>.runfiles; tests/tools/gpu_kit_test.sh packs
# binaries Bazel built for it that way). OUT_DIR must be new, empty or an earlier bundle (which
# is replaced).
set -euo pipefail

die() {
  echo "bundle.sh: $*" >&2
  exit 1
}

[ $# -ge 2 ] || die "usage: tools/bundle.sh [BAZEL_FLAG...] TARGET... OUT_DIR"
out_dir=${!#}
bazel_flags=()
targets=()
prebuilt_bin_dir=""
for arg in "${@:1:$#-1}"; do
  case "$arg" in
    --bin_dir=*) prebuilt_bin_dir=${arg#*=} ;;
    -*) bazel_flags+=("$arg") ;;
    *) targets+=("$arg") ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || die "no TARGET given"

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
workspace_name=$(sed -n 's/^workspace(name = "\([^"]*\)").*/\1/p' "$repo_root/WORKSPACE")
[ -n "$workspace_name" ] || die "cannot read the workspace name from $repo_root/WORKSPACE"

# //pkg:name or //pkg (name = last path component) -> pkg/name, the binary's path under bazel-bin.
label_to_path() {
  local label=$1 package name
  case "$label" in
    //*) ;;
    *) die "'$label': give absolute labels such as //tests/gpu:cast_test" ;;
  esac
  case "$label" in
    *...* | *:all | *:\*) die "'$label': name each binary, wildcards are not supported" ;;
  esac
  label=${label#//}
  package=${label%%:*}
  if [[ $label == *:* ]]; then name=${label#*:}; else name=${package##*/}; fi
  echo "$package/$name"
}

# glibc (the host's must be used with its own loader) and the CUDA libraries (the host's match
# its driver). Everything else a binary links dynamically goes into the bundle.
is_host_library() {
  case "$1" in
    linux-vdso.so* | ld-linux*.so* | libc.so* | libm.so* | libmvec.so* | libpthread.so* | \
      libdl.so* | librt.so* | libutil.so* | libresolv.so* | libnsl.so* | libanl.so*)
      return 0 ;;
    libcuda.so* | libcudart.so* | libcublas*.so* | libnccl*.so* | libcudnn*.so*)
      return 0 ;;
  esac
  return 1
}

is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

prepare_out_dir() {
  if [ -e "$out_dir" ]; then
    if [ -f "$out_dir/BINARIES" ]; then
      chmod -R u+w "$out_dir"
      rm -rf "$out_dir"
    elif [ -n "$(ls -A "$out_dir")" ]; then
      die "$out_dir exists and is not an earlier bundle; give a new or empty folder"
    fi
  fi
  mkdir -p "$out_dir/lib"
  out_dir=$(cd "$out_dir" && pwd)
}

# Copies the runfiles tree of bazel-bin/<path> to OUT_DIR/<path>.runfiles, resolving symlinks.
copy_runfiles() {
  local path=$1 source="$bin_dir/$1.runfiles"
  [ -x "$bin_dir/$path" ] || die "bazel-bin/$path is not an executable (is the target a binary?)"
  [ -d "$source" ] || die "no runfiles tree at $source"
  mkdir -p "$(dirname "$out_dir/$path")"
  cp -RL "$source" "$out_dir/$path.runfiles"
  chmod -R u+w "$out_dir/$path.runfiles"
  # The manifest lists absolute paths on this machine; the launcher sets RUNFILES_DIR instead.
  rm -f "$out_dir/$path.runfiles/MANIFEST"
  [ -x "$out_dir/$path.runfiles/$workspace_name/$path" ] || die "binary missing from its runfiles"
}

# Copies into OUT_DIR/lib every library that the ELF files under OUT_DIR load, other than host
# libraries and those already inside a runfiles tree (Bazel's own _solib_k8 libraries).
copy_shared_libraries() {
  local file line name resolved missing=()
  while IFS= read -r -d '' file; do
    is_elf "$file" || continue
    while IFS= read -r line; do
      [[ $line == *"=>"* ]] || continue
      name=$(echo "$line" | awk '{print $1}')
      resolved=$(echo "$line" | awk '{print $3}')
      is_host_library "$name" && continue
      if [ "$resolved" = "not" ]; then
        missing+=("$name (needed by ${file#"$out_dir"/})")
        continue
      fi
      [[ $resolved == "$out_dir"/* ]] && continue
      [ -e "$out_dir/lib/$name" ] || cp -L "$resolved" "$out_dir/lib/$name"
    done < <(ldd "$file" 2>/dev/null || true)
  done < <(find "$out_dir" -path "$out_dir/lib" -prune -o -type f -print0)
  [ ${#missing[@]} -eq 0 ] || die "libraries not found on this machine: ${missing[*]}"
  chmod -R u+w "$out_dir/lib"
}

write_info() {
  printf '%s\n' "${paths[@]}" >"$out_dir/BINARIES"
  {
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "commit: $(git -C "$repo_root" rev-parse HEAD 2>/dev/null || echo unknown)$(
      [ -n "$(git -C "$repo_root" status --porcelain 2>/dev/null)" ] && echo ' (with local changes)')"
    if [ -n "$prebuilt_bin_dir" ]; then
      echo "command: none, prebuilt binaries of ${targets[*]} from $prebuilt_bin_dir"
    else
      echo "command: bazel build -c opt ${bazel_flags[*]}${bazel_flags[*]:+ }${targets[*]}"
    fi
  } >"$out_dir/BUNDLE_INFO"
}

write_launcher() {
  sed "s/@WORKSPACE_NAME@/$workspace_name/" >"$out_dir/run.sh" <<'LAUNCHER'
#!/usr/bin/env bash
# Runs one binary of this bundle (made by tools/bundle.sh):  run.sh BINARY [ARGS...]
# BINARY is a path from the BINARIES file (tests/gpu/cast_test), its label (//tests/gpu:cast_test)
# or its name when unique (cast_test). The binary runs inside its runfiles tree, as under
# `bazel run`, so relative data paths resolve; BUILD_WORKING_DIRECTORY holds the caller's folder.
# Libraries: the bundle's lib/, then LD_LIBRARY_PATH, then the host's CUDA libraries from
# $CUDA_HOME/lib64, /usr/local/cuda/lib64, their extras/CUPTI/lib64 (libcupti, loaded at run
# time by the profiler) and the Python environment's nvidia/*/lib folders (pip's CUDA wheels;
# XLMR_PYTHON picks the interpreter, default python3).
set -euo pipefail
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace_name=@WORKSPACE_NAME@

if [ $# -lt 1 ]; then
  echo "usage: run.sh BINARY [ARGS...]; binaries in this bundle:" >&2
  sed 's/^/  /' "$bundle/BINARIES" >&2
  exit 2
fi
request=$1
shift
case "$request" in
  //*:*) request=${request#//}; request=${request/://} ;;
  //*) request=${request#//}; request=$request/${request##*/} ;;
esac
binary=$(awk -v want="$request" '$0 == want { print; exit }' "$bundle/BINARIES")
[ -n "$binary" ] || binary=$(awk -v want="/$request" \
  'substr($0, length($0) - length(want) + 1) == want' "$bundle/BINARIES")
if [ -z "$binary" ] || [ "$(echo "$binary" | wc -l)" -ne 1 ]; then
  echo "run.sh: '$request' is not exactly one binary of this bundle:" >&2
  sed 's/^/  /' "$bundle/BINARIES" >&2
  exit 2
fi

cuda_library_dirs() {
  local dir python
  for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    [ -n "$dir" ] && [ -d "$dir/lib64" ] && echo "$dir/lib64"
    # CUPTI, which the CUDA backend's profiler dlopens (never a link-time dependency).
    [ -n "$dir" ] && [ -d "$dir/extras/CUPTI/lib64" ] && echo "$dir/extras/CUPTI/lib64"
  done
  python=${XLMR_PYTHON:-python3}
  command -v "$python" >/dev/null 2>&1 || return 0
  "$python" - <<'PYTHON' 2>/dev/null || true
import glob, os
try:
    import nvidia  # namespace package of pip's CUDA wheels (nvidia-cublas, nvidia-nccl,
                   # nvidia-cuda-cupti: nvidia/cuda_cupti/lib; CUDA 13's nvidia/cu13/lib, ...)
except ImportError:
    raise SystemExit(0)
for root in nvidia.__path__:
    for lib in sorted(glob.glob(os.path.join(root, "*", "lib"))):
        print(lib)
PYTHON
}

library_path="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
while IFS= read -r dir; do
  case ":$library_path:" in *":$dir:"*) ;; *) library_path="$library_path:$dir" ;; esac
done < <(cuda_library_dirs)
export LD_LIBRARY_PATH=$library_path

runfiles="$bundle/$binary.runfiles"
executable="$runfiles/$workspace_name/$binary"
if command -v ldd >/dev/null 2>&1 && missing=$(ldd "$executable" | grep 'not found'); then
  echo "run.sh: $binary needs libraries this host does not have:" >&2
  echo "$missing" >&2
  echo "searched LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >&2
  echo "(install the matching CUDA libraries, or point CUDA_HOME or XLMR_PYTHON at them)" >&2
  exit 127
fi

export RUNFILES_DIR=$runfiles TEST_SRCDIR=$runfiles TEST_WORKSPACE=$workspace_name
export BUILD_WORKING_DIRECTORY=${BUILD_WORKING_DIRECTORY:-$PWD}
cd "$runfiles/$workspace_name"
exec "./$binary" "$@"
LAUNCHER
  chmod +x "$out_dir/run.sh"
}

main() {
  paths=()
  for target in "${targets[@]}"; do paths+=("$(label_to_path "$target")"); done
  prepare_out_dir
  if [ -n "$prebuilt_bin_dir" ]; then
    bin_dir=$(cd "$prebuilt_bin_dir" && pwd)
  else
    (cd "$repo_root" && bazel build -c opt "${bazel_flags[@]}" "${targets[@]}")
    bin_dir=$(cd "$repo_root" && bazel info -c opt "${bazel_flags[@]}" bazel-bin 2>/dev/null)
  fi
  for path in "${paths[@]}"; do copy_runfiles "$path"; done
  copy_shared_libraries
  write_info
  write_launcher
  echo "bundle.sh: $out_dir ($(du -sh "$out_dir" | cut -f1)): ${paths[*]}; run with $out_dir/run.sh"
}

main
