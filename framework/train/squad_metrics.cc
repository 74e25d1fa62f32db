#include "framework/train/squad_metrics.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "framework/core/check.h"
#include "framework/core/utf8.h"

namespace xlmr::train {
namespace {

// A decoded character and its UTF-8 spelling.
struct Char {
  uint32_t code = 0;
  std::string bytes;
};

uint32_t Decode(absl::string_view s) {
  const auto b = [&s](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i])); };
  if (s.size() == 1) return b(0);
  if (s.size() == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (s.size() == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

std::string Encode(uint32_t code) {
  std::string out;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
  return out;
}

uint32_t Lower(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 0x20;
  if (c < 0x80) return c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 0x20;  // Latin-1
  if (c == 0x130) return c;  // İ lowers to two characters in Python: left alone
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c | 1;  // even upper
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;  // Greek capitals
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;  // Cyrillic
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  if (c >= 0x460 && c <= 0x4FF && (c & 1) == 0 && !(c >= 0x482 && c <= 0x489) &&
      !(c >= 0x4C0 && c <= 0x4CF)) {
    return c + 1;
  }
  return c;
}

// Python's str.split() whitespace.
bool IsSpace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

bool IsWordChar(uint32_t c) {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  }
  if (IsSpace(c)) return false;
  if ((c >= 0xA0 && c <= 0xBF) || c == 0xD7 || c == 0xF7) return false;
  if ((c >= 0x2000 && c <= 0x206F) || (c >= 0x3000 && c <= 0x303F)) return false;
  return true;
}

bool IsAsciiPunctuation(uint32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

std::vector<uint32_t> Decoded(absl::string_view text) {
  const std::vector<size_t> starts = core::Utf8CharStarts(text);
  std::vector<uint32_t> out;
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    out.push_back(Decode(text.substr(starts[i], starts[i + 1] - starts[i])));
  }
  return out;
}

bool MatchesAt(const std::vector<uint32_t>& s, size_t at, absl::string_view word) {
  if (at + word.size() > s.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (s[at + k] != static_cast<unsigned char>(word[k])) return false;
  }
  return true;
}

std::vector<std::string> Tokens(absl::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (uint32_t c : Decoded(NormalizeAnswer(text))) {
    if (c == ' ') {
      tokens.push_back(current);
      current.clear();
    } else {
      current += Encode(c);
    }
  }
  if (!current.empty()) tokens.push_back(current);
  return tokens;
}

// Shared tokens of two lists, as collections.Counter's & counts them.
int64_t CommonTokens(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::map<std::string, int64_t> counts;
  for (const std::string& t : a) ++counts[t];
  int64_t same = 0;
  for (const std::string& t : b) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  return same;
}

double F1FromCounts(int64_t same, size_t predicted, size_t gold) {
  const double precision = 1.0 * same / predicted;
  const double recall = 1.0 * same / gold;
  return (2 * precision * recall) / (precision + recall);
}

// The v1.1 script's f1_score.
double F1V1(const std::string& prediction, const std::string& gold) {
  const std::vector<std::string> p = Tokens(prediction), g = Tokens(gold);
  const int64_t same = CommonTokens(p, g);
  if (same == 0) return 0;
  return F1FromCounts(same, p.size(), g.size());
}

// The v2.0 script's compute_f1: an empty side scores 1 only against another empty side.
double F1V2(const std::string& gold, const std::string& prediction) {
  const std::vector<std::string> g = gold.empty() ? std::vector<std::string>() : Tokens(gold);
  const std::vector<std::string> p =
      prediction.empty() ? std::vector<std::string>() : Tokens(prediction);
  if (g.empty() || p.empty()) return g == p ? 1 : 0;
  const int64_t same = CommonTokens(g, p);
  if (same == 0) return 0;
  return F1FromCounts(same, p.size(), g.size());
}

double Exact(const std::string& a, const std::string& b) {
  return NormalizeAnswer(a) == NormalizeAnswer(b) ? 1 : 0;
}

}  // namespace

std::string NormalizeAnswer(absl::string_view text) {
  // lower, then remove_punc
  std::vector<uint32_t> s;
  for (uint32_t c : Decoded(text)) {
    c = Lower(c);
    if (!IsAsciiPunctuation(c)) s.push_back(c);
  }
  // remove_articles: each whole word a, an, the becomes one space.
  std::vector<uint32_t> without;
  for (size_t i = 0; i < s.size();) {
    bool removed = false;
    if (i == 0 || !IsWordChar(s[i - 1])) {
      for (absl::string_view article : {"the", "an", "a"}) {
        const size_t end = i + article.size();
        if (MatchesAt(s, i, article) && (end == s.size() || !IsWordChar(s[end]))) {
          without.push_back(' ');
          i = end;
          removed = true;
          break;
        }
      }
    }
    if (!removed) without.push_back(s[i++]);
  }
  // white_space_fix: " ".join(text.split())
  std::string out;
  bool pending_space = false;
  for (uint32_t c : without) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += Encode(c);
  }
  return out;
}

SquadV1Scores ComputeSquadV1(const std::vector<SquadItem>& items) {
  XLMR_CHECK(!items.empty());
  double exact = 0, f1 = 0;
  for (const SquadItem& item : items) {
    XLMR_CHECK(!item.answers.empty()) << "SQuAD v1.1 needs at least one gold answer";
    double best_exact = 0, best_f1 = 0;
    for (const std::string& gold : item.answers) {
      best_exact = std::max(best_exact, Exact(item.prediction, gold));
      best_f1 = std::max(best_f1, F1V1(item.prediction, gold));
    }
    exact += best_exact;
    f1 += best_f1;
  }
  const auto total = static_cast<double>(items.size());
  return {100.0 * exact / total, 100.0 * f1 / total};
}

SquadV2Scores ComputeSquadV2(const std::vector<SquadItem>& items, double no_answer_threshold) {
  XLMR_CHECK(!items.empty());
  const size_t n = items.size();
  std::vector<double> exact_raw(n), f1_raw(n), exact(n), f1(n);
  std::vector<bool> has_answer(n);
  for (size_t i = 0; i < n; ++i) {
    const SquadItem& item = items[i];
    has_answer[i] = !item.answers.empty();
    std::vector<std::string> golds;
    for (const std::string& a : item.answers) {
      if (!NormalizeAnswer(a).empty()) golds.push_back(a);
    }
    if (golds.empty()) golds.push_back("");
    for (const std::string& gold : golds) {
      exact_raw[i] = std::max(exact_raw[i], Exact(gold, item.prediction));
      f1_raw[i] = std::max(f1_raw[i], F1V2(gold, item.prediction));
    }
    const bool predicted_no_answer = item.no_answer_probability > no_answer_threshold;
    exact[i] = predicted_no_answer ? (has_answer[i] ? 0.0 : 1.0) : exact_raw[i];
    f1[i] = predicted_no_answer ? (has_answer[i] ? 0.0 : 1.0) : f1_raw[i];
  }
  SquadV2Scores scores;
  // Python sums the scores in question order; so do these loops.
  auto mean = [&](const std::vector<double>& values, bool which, bool all, int64_t* count) {
    double sum = 0;
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (all || has_answer[i] == which) {
        sum += values[i];
        ++total;
      }
    }
    *count = total;
    return 100.0 * sum / static_cast<double>(total);
  };
  scores.exact = mean(exact, true, true, &scores.total);
  scores.f1 = mean(f1, true, true, &scores.total);
  scores.has_ans = std::count(has_answer.begin(), has_answer.end(), true) > 0;
  if (scores.has_ans) {
    scores.has_ans_exact = mean(exact, true, false, &scores.has_ans_total);
    scores.has_ans_f1 = mean(f1, true, false, &scores.has_ans_total);
  }
  scores.no_ans = std::count(has_answer.begin(), has_answer.end(), false) > 0;
  if (scores.no_ans) {
    scores.no_ans_exact = mean(exact, false, false, &scores.no_ans_total);
    scores.no_ans_f1 = mean(f1, false, false, &scores.no_ans_total);
  }
  // find_best_thresh: questions by no-answer probability (a stable sort), each one moved from
  // "predict no answer" to "use the prediction" in turn.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&items](size_t a, size_t b) {
    return items[a].no_answer_probability < items[b].no_answer_probability;
  });
  auto best = [&](const std::vector<double>& raw, double* best_score, double* best_thresh) {
    double current = static_cast<double>(std::count(has_answer.begin(), has_answer.end(), false));
    *best_score = current;
    *best_thresh = 0.0;
    for (size_t i : order) {
      const double diff =
          has_answer[i] ? raw[i] : (items[i].prediction.empty() ? 0.0 : -1.0);
      current += diff;
      if (current > *best_score) {
        *best_score = current;
        *best_thresh = items[i].no_answer_probability;
      }
    }
    *best_score = 100.0 * *best_score / static_cast<double>(n);
  };
  best(exact_raw, &scores.best_exact, &scores.best_exact_thresh);
  best(f1_raw, &scores.best_f1, &scores.best_f1_thresh);
  return scores;
}

std::vector<std::pair<std::string, double>> SquadV1Figures(const SquadV1Scores& scores) {
  return {{"exact_match", scores.exact_match}, {"f1", scores.f1}};
}

std::vector<std::pair<std::string, double>> SquadV2Figures(const SquadV2Scores& scores) {
  std::vector<std::pair<std::string, double>> figures = {
      {"exact", scores.exact}, {"f1", scores.f1}, {"total", static_cast<double>(scores.total)}};
  if (scores.has_ans) {
    figures.insert(figures.end(), {{"HasAns_exact", scores.has_ans_exact},
                                   {"HasAns_f1", scores.has_ans_f1},
                                   {"HasAns_total", static_cast<double>(scores.has_ans_total)}});
  }
  if (scores.no_ans) {
    figures.insert(figures.end(), {{"NoAns_exact", scores.no_ans_exact},
                                   {"NoAns_f1", scores.no_ans_f1},
                                   {"NoAns_total", static_cast<double>(scores.no_ans_total)}});
  }
  figures.insert(figures.end(), {{"best_exact", scores.best_exact},
                                 {"best_exact_thresh", scores.best_exact_thresh},
                                 {"best_f1", scores.best_f1},
                                 {"best_f1_thresh", scores.best_f1_thresh}});
  return figures;
}

}  // namespace xlmr::train
