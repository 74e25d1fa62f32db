# Sourced by the model-family recipe tests (roberta_test.sh, camembert_test.sh, bert_test.sh):
# the checks they share. Each script sources this after `cd "$TEST_TMPDIR"`.

absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
fail() { echo "FAILED: $*"; exit 1; }
compact() { tr -d ' \n' < "$1"; }

# expect_golden_logits PREDICTIONS_JSONL GOLDEN_LOGITS_TSV: every row's logits (xlmr_predict's
# output) within 1e-5 (absolute) of transformers' (one tab-separated row per line). Both sides
# are fp32 with dropout off and differ only in the order of the sums; the tests' tiny models
# spread their logits so that a token off moves them by 1e-2 or more.
expect_golden_logits() {
  sed 's/.*"logits":\[\([^]]*\)\].*/\1/; s/,/\t/g' "$1" > ours.tsv
  [ "$(wc -l < ours.tsv)" -eq "$(wc -l < "$2")" ] || fail "expected $(wc -l < "$2") predictions"
  paste ours.tsv "$2" | awk -F'\t' '{
      n = NF / 2
      for (i = 1; i <= n; ++i) { d = $i - $(i + n); if (d < 0) d = -d; if (d > worst) worst = d }
    } END { printf "logits max |diff| vs transformers: %.3g\n", worst; exit worst > 1e-5 }' ||
    { paste ours.tsv "$2"; fail "logits differ from transformers' by more than 1e-5"; }
}

# expect_golden_loss PREDICTIONS_JSONL INPUT_TSV GOLDEN_LOSS_TXT: the mean cross-entropy of our
# probabilities (xlmr_predict's) against INPUT_TSV's labels (neg = 0, pos = 1, the tiny models'
# two classes) within 1e-5 of transformers' loss, as the logits.
expect_golden_loss() {
  awk -F'\t' 'NR > 1 { print ($2 == "pos") }' "$2" > label_ids.txt
  sed 's/.*"probabilities":\[\([^]]*\)\].*/\1/; s/,/\t/g' "$1" | paste - label_ids.txt |
    awk -F'\t' -v golden="$(cat "$3")" '{ loss -= log($($NF + 1)) } END {
      loss /= NR; d = loss - golden; if (d < 0) d = -d
      printf "loss %.9g, transformers %.9g, |diff| %.3g\n", loss, golden, d; exit d > 1e-5 }' ||
    fail "loss differs from transformers' by more than 1e-5"
}

# expect_error EXPECTED COMMAND...: COMMAND exits with status 2 and one line on stderr holding
# EXPECTED, and writes neither bad_out nor bad_pred.jsonl (where the callers point it).
expect_error() {
  local expected="$1"; shift
  rm -rf bad_out bad_pred.jsonl
  "$@" > stdout.txt 2> stderr.txt
  local status=$?
  if [ "$status" -ne 2 ] || [ "$(wc -l < stderr.txt)" -ne 1 ] || ! grep -qF -- "$expected" stderr.txt ||
     [ -e bad_out ] || [ -e bad_pred.jsonl ]; then
    cat stderr.txt; fail "$*: status $status, expected 2 and one line with: $expected"
  fi
}
