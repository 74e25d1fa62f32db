#include "framework/train/sequence_labeling_metrics.h"

#include <algorithm>
#include <set>
#include <utility>

#include "framework/core/check.h"

namespace xlmr::train {
namespace {

// Bytes of the UTF-8 character a tag starts with: seqeval takes chunk[0], a code point.
size_t FirstCharacterBytes(const std::string& tag) {
  const auto lead = static_cast<unsigned char>(tag[0]);
  size_t length = 1;
  if ((lead & 0xE0) == 0xC0) length = 2;
  if ((lead & 0xF0) == 0xE0) length = 3;
  if ((lead & 0xF8) == 0xF0) length = 4;
  return std::min(length, tag.size());
}

struct Chunk {
  char prefix;  // the first character when it is ASCII, else '\0' (never a prefix we test)
  std::string type;
};

// seqeval: tag = chunk[0]; type_ = chunk[1:].split('-', maxsplit=1)[-1] or '_'.
Chunk ParseTag(const std::string& tag) {
  XLMR_CHECK(!tag.empty()) << "empty tag";
  const size_t first = FirstCharacterBytes(tag);
  Chunk chunk;
  chunk.prefix = first == 1 ? tag[0] : '\0';
  const std::string rest = tag.substr(first);
  const size_t dash = rest.find('-');
  chunk.type = dash == std::string::npos ? rest : rest.substr(dash + 1);
  if (chunk.type.empty()) chunk.type = "_";
  return chunk;
}

// seqeval's end_of_chunk, rule by rule.
bool EndOfChunk(char prev_tag, char tag, const std::string& prev_type, const std::string& type) {
  if (prev_tag == 'E' || prev_tag == 'S') return true;
  if ((prev_tag == 'B' || prev_tag == 'I') && (tag == 'B' || tag == 'S' || tag == 'O')) {
    return true;
  }
  return prev_tag != 'O' && prev_tag != '.' && prev_type != type;
}

// seqeval's start_of_chunk, rule by rule.
bool StartOfChunk(char prev_tag, char tag, const std::string& prev_type, const std::string& type) {
  if (tag == 'B' || tag == 'S') return true;
  if ((prev_tag == 'E' || prev_tag == 'S' || prev_tag == 'O') && (tag == 'E' || tag == 'I')) {
    return true;
  }
  return tag != 'O' && tag != '.' && prev_type != type;
}

double Divide(int64_t numerator, int64_t denominator) {
  if (denominator == 0) return 0.0;  // seqeval zero_division="warn" -> 0
  return static_cast<double>(numerator) / static_cast<double>(denominator);
}

}  // namespace

std::vector<Entity> GetEntities(const std::vector<std::vector<std::string>>& sentences) {
  // The joined sequence: every sentence followed by "O", then get_entities' own final "O".
  std::vector<const std::string*> sequence;
  static const std::string kOutside = "O";
  for (const std::vector<std::string>& sentence : sentences) {
    for (const std::string& tag : sentence) sequence.push_back(&tag);
    sequence.push_back(&kOutside);
  }
  sequence.push_back(&kOutside);
  std::vector<Entity> entities;
  char prev_tag = 'O';
  std::string prev_type;  // '' before the first tag, as in seqeval
  int64_t begin = 0;
  for (size_t i = 0; i < sequence.size(); ++i) {
    Chunk chunk = ParseTag(*sequence[i]);
    if (EndOfChunk(prev_tag, chunk.prefix, prev_type, chunk.type)) {
      entities.push_back(Entity{prev_type, begin, static_cast<int64_t>(i) - 1});
    }
    if (StartOfChunk(prev_tag, chunk.prefix, prev_type, chunk.type)) {
      begin = static_cast<int64_t>(i);
    }
    prev_tag = chunk.prefix;
    prev_type = std::move(chunk.type);
  }
  return entities;
}

SequenceLabelingScores ScoreSequenceLabeling(
    const std::vector<std::vector<std::string>>& true_tags,
    const std::vector<std::vector<std::string>>& predicted_tags) {
  XLMR_CHECK_EQ(true_tags.size(), predicted_tags.size());
  int64_t words = 0;
  int64_t correct_words = 0;
  for (size_t s = 0; s < true_tags.size(); ++s) {
    XLMR_CHECK_EQ(true_tags[s].size(), predicted_tags[s].size()) << "sentence " << s;
    for (size_t w = 0; w < true_tags[s].size(); ++w) {
      ++words;
      correct_words += true_tags[s][w] == predicted_tags[s][w] ? 1 : 0;
    }
  }
  // Sets, as seqeval's: an entity counts once (with the "O" separators no two coincide anyway).
  using Key = std::tuple<std::string, int64_t, int64_t>;
  std::set<Key> truth;
  std::set<Key> predicted;
  for (const Entity& e : GetEntities(true_tags)) truth.insert({e.type, e.first, e.last});
  for (const Entity& e : GetEntities(predicted_tags)) predicted.insert({e.type, e.first, e.last});
  SequenceLabelingScores scores;
  scores.true_entities = static_cast<int64_t>(truth.size());
  scores.predicted_entities = static_cast<int64_t>(predicted.size());
  for (const Key& key : predicted) scores.correct_entities += truth.count(key);
  scores.precision = Divide(scores.correct_entities, scores.predicted_entities);
  scores.recall = Divide(scores.correct_entities, scores.true_entities);
  // seqeval: denom = p + r; denom[denom == 0] = 1; f = (1 + 1) * p * r / denom.
  double denominator = scores.precision + scores.recall;
  if (denominator == 0.0) denominator = 1.0;
  scores.f1 = 2.0 * scores.precision * scores.recall / denominator;
  scores.accuracy = Divide(correct_words, words);
  return scores;
}

}  // namespace xlmr::train
