#include "models/tokenizers/byte_level_bpe/bpe.h"

#include <queue>
#include <tuple>

namespace xlmr::models::roberta {
namespace {

// A symbol of the word being merged, in a doubly linked list over the initial positions.
struct Symbol {
  int32_t id = 0;
  int64_t begin = 0;
  int64_t end = 0;
  int64_t prev = -1;  // index of the previous live symbol, -1 at the start
  int64_t next = -1;  // index of the next live symbol, -1 at the end
  bool alive = true;
};

// A merge that applied when it was queued: symbol `left` (ids left_id, right_id with its
// successor) merges into `merged`. Stale once either symbol changed; then skipped.
struct Candidate {
  int32_t rank = 0;
  int64_t left = 0;
  int32_t left_id = 0;
  int32_t right_id = 0;
  int32_t merged = 0;
};

// Lowest rank first; for one rank, the leftmost place first.
struct LaterCandidate {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return std::tie(a.rank, a.left) > std::tie(b.rank, b.left);
  }
};

}  // namespace

BytePairEncoder::BytePairEncoder(const std::vector<Merge>& merges) {
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const Merge& m = merges[rank];
    rules_.try_emplace(std::make_pair(m.left, m.right),
                       Rule{static_cast<int32_t>(rank), m.merged});
  }
}

std::vector<WordToken> BytePairEncoder::EncodeWord(const std::vector<int32_t>& symbols) const {
  const int64_t n = static_cast<int64_t>(symbols.size());
  std::vector<Symbol> word(symbols.size());
  for (int64_t i = 0; i < n; ++i) {
    word[i] = Symbol{symbols[i], i, i + 1, i - 1, i + 1 < n ? i + 1 : -1, true};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, LaterCandidate> queue;
  auto queue_pair_at = [&](int64_t left) {
    if (left < 0 || word[left].next < 0) return;
    const int32_t left_id = word[left].id;
    const int32_t right_id = word[word[left].next].id;
    auto rule = rules_.find(std::make_pair(left_id, right_id));
    if (rule == rules_.end()) return;
    queue.push(Candidate{rule->second.rank, left, left_id, right_id, rule->second.merged});
  };
  for (int64_t i = 0; i + 1 < n; ++i) queue_pair_at(i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = word[c.left];
    if (!left.alive || left.next < 0 || left.id != c.left_id ||
        word[left.next].id != c.right_id) {
      continue;  // stale: one of the two symbols has been merged since
    }
    Symbol& right = word[left.next];
    left.id = c.merged;
    left.end = right.end;
    left.next = right.next;
    right.alive = false;
    if (left.next >= 0) word[left.next].prev = c.left;
    queue_pair_at(left.prev);
    queue_pair_at(c.left);
  }

  std::vector<WordToken> tokens;
  for (int64_t i = 0; i >= 0 && i < n; i = word[i].next) {
    tokens.push_back(WordToken{word[i].id, word[i].begin, word[i].end});
  }
  return tokens;
}

}  // namespace xlmr::models::roberta
