#include "framework/data/qa_features.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace xlmr::data {
namespace {

// The question without its leading whitespace, as Python's str.lstrip() on ASCII whitespace.
std::string StripLeadingWhitespace(const std::string& question) {
  const size_t first = question.find_first_not_of(" \t\n\r\f\v");
  return first == std::string::npos ? std::string() : question.substr(first);
}

// run_qa's labels for one window whose context tokens are [first, last] of `feature`.
void LabelWindow(const QaExample& example, int32_t first, int32_t last, QaFeature* feature) {
  feature->start_position = 0;
  feature->end_position = 0;
  if (example.answers.empty()) return;
  const QaAnswer& answer = example.answers.front();
  const int64_t start = answer.start_byte;
  const int64_t end = answer.start_byte + static_cast<int64_t>(answer.text.size());
  const std::vector<TextSpan>& offsets = feature->offsets;
  if (!(offsets[first].begin <= start && offsets[last].end >= end)) return;
  int32_t token = first;
  while (token <= last && offsets[token].begin <= start) ++token;
  feature->start_position = token - 1;
  token = last;
  while (token >= first && offsets[token].end >= end) --token;
  feature->end_position = token + 1;
}

}  // namespace

absl::StatusOr<std::vector<QaFeature>> PrepareQaFeatures(const std::vector<QaExample>& examples,
                                                         const TokenizeWithSpansFn& tokenize,
                                                         const QaFeatureOptions& options) {
  std::vector<QaFeature> features;
  for (size_t e = 0; e < examples.size(); ++e) {
    const QaExample& example = examples[e];
    const std::string named = absl::StrCat(example.where, ": id '", example.id, "'");
    std::vector<TextSpan> question_spans;
    const std::vector<int32_t> question =
        tokenize(StripLeadingWhitespace(example.question), &question_spans);
    std::vector<TextSpan> context_spans;
    const std::vector<int32_t> context = tokenize(example.context, &context_spans);
    if (context.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(named, ": the context has no tokens"));
    }
    // <s> question </s></s> context </s> (RoBERTa), [CLS] question [SEP] context [SEP] (BERT).
    const int64_t room = options.max_seq_length - 2 - options.pair_separators -
                         static_cast<int64_t>(question.size());
    const int64_t total = static_cast<int64_t>(context.size());
    if (total > room && room <= options.doc_stride) {
      // The context must be cut into windows, and tokenizers refuses a stride that is not
      // smaller than the room the question leaves for the context.
      return absl::InvalidArgumentError(absl::StrCat(
          named, ": the question has ", question.size(), " tokens, which leaves ",
          std::max<int64_t>(room, 0), " of --max_seq_length=", options.max_seq_length,
          " for the context; windows need more than --doc_stride=", options.doc_stride));
    }
    const int64_t window = std::min(room, total);
    const int64_t step = room - options.doc_stride;
    for (int64_t begin = 0;; begin += step) {
      const int64_t end = std::min(begin + window, total);
      QaFeature feature;
      feature.example_index = static_cast<int64_t>(e);
      feature.input_ids.push_back(options.bos_id);
      feature.input_ids.insert(feature.input_ids.end(), question.begin(), question.end());
      feature.input_ids.insert(feature.input_ids.end(), options.pair_separators, options.eos_id);
      const auto first = static_cast<int32_t>(feature.input_ids.size());
      feature.input_ids.insert(feature.input_ids.end(), context.begin() + begin,
                               context.begin() + end);
      feature.input_ids.push_back(options.eos_id);
      feature.offsets.assign(first, TextSpan{});
      feature.offsets.insert(feature.offsets.end(), context_spans.begin() + begin,
                             context_spans.begin() + end);
      feature.offsets.push_back(TextSpan{});
      feature.is_context.assign(feature.input_ids.size(), 0);
      std::fill(feature.is_context.begin() + first, feature.is_context.end() - 1, 1);
      LabelWindow(example, first, static_cast<int32_t>(first + (end - begin) - 1), &feature);
      features.push_back(std::move(feature));
      if (end == total) break;
    }
  }
  return features;
}

}  // namespace xlmr::data
