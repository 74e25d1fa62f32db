# Sourced by the tests that read the whole source tree (layering_test.sh, doc_paths_test.sh):
# changes into the tree that docs/ARCHITECTURE.md's runfile links to (Bazel cannot glob across
# packages, so these tests read the tree instead of a declared copy of each package), and
# expand_braces, which reads `kernels/{cpu,cuda}/optim.h` as the shell would.
runfiles=${RUNFILES_DIR:-$TEST_SRCDIR}/${TEST_WORKSPACE:-xlmr_trainer}
doc=$runfiles/docs/ARCHITECTURE.md
root=$(cd "$(dirname "$(readlink -f "$doc")")/.." && pwd)
[ -f "$root/framework/ops/dispatch.h" ] || { echo "FAIL: no source tree at $root" >&2; exit 1; }
cd "$root"

# One word with {a,b} groups, expanded as the shell would (without eval).
expand_braces() {
  local word=$1
  if [[ $word != *"{"*"}"* ]]; then
    echo "$word"
    return
  fi
  local prefix=${word%%\{*} rest=${word#*\{}
  local choices=${rest%%\}*} suffix=${rest#*\}} choice
  IFS=, read -ra choices_array <<< "$choices"
  for choice in "${choices_array[@]}"; do expand_braces "$prefix$choice$suffix"; done
}
