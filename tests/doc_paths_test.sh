#!/usr/bin/env bash
# The documents name only what exists: every repository path that README.md and docs/*.md name
# (framework/ops/dispatch.h, tests/recipes/, kernels/{cpu,cuda}/optim.*, recipes/xlmr_finetune
# as a target's path), every Bazel label (//tests/models:family_parity_test) and every relative
# link (images/...) must be a file, folder, glob match or target of the tree.
#
# Catches: a document that still names a file after it was moved or deleted, or a test target
# after it was renamed. Parts after a placeholder (tests/fuzz/corpus/<target>) are not checked.
#
# It reads the source tree itself, found through the documents' runfiles, as layering_test does
# (see tests/BUILD).
set -euo pipefail
shopt -s nullglob

# The source tree (the current directory from here) and expand_braces.
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/source_tree.sh"

# Whether a BUILD file in package $1 defines target $2 (a rule's name or an exported file).
has_target() {
  local package=$1 target=$2 build=${1:+$1/}BUILD
  [ -f "$build" ] || return 1
  grep -qE "name = \"$target\"" "$build" && return 0
  [ -e "${package:+$package/}$target" ]
}

# Whether a path (braces expanded, globs allowed) names something in the tree.
path_exists() {
  local path=$1 matches
  # shellcheck disable=SC2206  # the glob is meant to expand
  matches=($path)
  [ "${#matches[@]}" -gt 0 ] && [ -e "${matches[0]}" ] && return 0
  # recipes/xlmr_finetune: the path of a target's output (bazel-bin/recipes/xlmr_finetune).
  has_target "$(dirname "$path")" "$(basename "$path")"
}

tops='\.ci|bench|docs|framework|kernels|models|recipes|tests|third_party|tools'
failures=0 checked=0
fail() {
  echo "FAIL: $1: $2" >&2
  failures=$((failures + 1))
}

for file in README.md docs/*.md; do
  [ -f "$file" ] || continue
  # Repository paths: a word that starts with a top-level folder after a space, quote or bracket
  # (so not inside /path/to/... or https://...).
  while read -r word; do
    word=${word%%<*}                                   # up to a placeholder
    [[ $word == *"{"* && $word != *"}"* ]] && word=${word%%\{*}   # "{a, b}" split by a space
    while [[ $word =~ [.,:\;]$ ]]; do word=${word%?}; done
    [ -n "$word" ] || continue
    while read -r path; do
      checked=$((checked + 1))
      path_exists "${path%/}" || fail "$file" "names $path, which is not in the tree"
    done < <(expand_braces "$word")
  done < <(grep -oE "(^|[][ \`(\"',=])($tops)/[A-Za-z0-9_.*{},/<>+-]*" "$file" | sed -E 's/^[^a-z.]//')

  # Bazel labels: //package:target, //package (its BUILD), //:file.
  while read -r label; do
    [[ $label == "//..." || $label == *"<"* ]] && continue
    label=${label%.}
    package=${label#//}
    package=${package%%:*}
    target=${label##*:}
    [[ $label == *:* ]] || target=""
    checked=$((checked + 1))
    if [ -n "$target" ]; then
      has_target "$package" "$target" || fail "$file" "names $label, which is not a target"
    else
      [ -f "$package/BUILD" ] || fail "$file" "names $label, which is not a package"
    fi
  done < <(grep -oE "(^|[][ \`(\"',=])//[A-Za-z0-9_/.-]*(:[A-Za-z0-9_./<>+-]+)?" "$file" | sed -E 's,^[^/],,')

  # Relative links of the markdown: [text](path), from the document's folder.
  while read -r link; do
    [[ $link == *://* || $link == "#"* ]] && continue
    checked=$((checked + 1))
    [ -e "$(dirname "$file")/${link%%#*}" ] || fail "$file" "links to $link, which is not in the tree"
  done < <(grep -oE '\]\([^)]+\)' "$file" | sed -E 's/^\]\(//; s/\)$//')
done

if [ "$failures" -gt 0 ]; then
  echo "$failures of $checked paths, labels and links named by README.md and docs/*.md are not in the tree" >&2
  exit 1
fi
echo "PASS: $checked paths, labels and links named by README.md and docs/*.md, each in the tree"
