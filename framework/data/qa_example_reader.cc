#include "framework/data/qa_example_reader.h"

#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "framework/core/utf8.h"
#include "framework/data/data_file.h"
#include "framework/io/whole_file.h"
#include "nlohmann/json.hpp"

namespace xlmr::data {
namespace {

using nlohmann::json;

absl::Status Error(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::StatusOr<std::string> StringField(const json& object, const char* key,
                                        absl::string_view where) {
  const auto it = object.find(key);
  if (it == object.end()) return Error(where, absl::StrCat("missing \"", key, "\""));
  if (!it->is_string()) return Error(where, absl::StrCat("\"", key, "\" must be a string"));
  return it->get<std::string>();
}

absl::StatusOr<const json*> Field(const json& object, const char* key, json::value_t type,
                                  const char* type_name, absl::string_view where) {
  const auto it = object.find(key);
  if (it == object.end()) return Error(where, absl::StrCat("missing \"", key, "\""));
  if (it->type() != type) {
    return Error(where, absl::StrCat("\"", key, "\" must be ", type_name));
  }
  return &*it;
}

// Checks that the answer's text is in the context where answer_start says, and sets start_byte.
absl::Status LocateAnswer(const QaExample& example, size_t index, QaAnswer* answer) {
  const std::string where = absl::StrCat(example.where, ": id '", example.id, "'");
  const std::optional<size_t> start = core::ByteOffsetOfChar(example.context, answer->answer_start);
  if (!start.has_value()) {
    return Error(where, absl::StrCat("answer ", index, ": answer_start ", answer->answer_start,
                                     " is outside the context (",
                                     core::Utf8CharStarts(example.context).size() - 1,
                                     " characters)"));
  }
  if (example.context.compare(*start, answer->text.size(), answer->text) != 0) {
    const std::vector<size_t> chars =
        core::Utf8CharStarts(absl::string_view(example.context).substr(*start));
    const size_t answer_chars = core::Utf8CharStarts(answer->text).size() - 1;
    const size_t shown = chars[std::min(answer_chars, chars.size() - 1)];
    return Error(where, absl::StrCat("answer ", index, ": answer_start ", answer->answer_start,
                                     " points at '", example.context.substr(*start, shown),
                                     "', not at its text '", answer->text, "'"));
  }
  answer->start_byte = static_cast<int64_t>(*start);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> AnswerStart(const json& value, absl::string_view where) {
  if (!value.is_number_integer()) return Error(where, "answer_start must be an integer");
  return value.get<int64_t>();
}

absl::Status FinishExample(QaExample* example, std::unordered_set<std::string>* ids) {
  for (size_t i = 0; i < example->answers.size(); ++i) {
    XLMR_RETURN_IF_ERROR(LocateAnswer(*example, i, &example->answers[i]));
  }
  if (!ids->insert(example->id).second) {
    return Error(example->where, absl::StrCat("id '", example->id, "' occurs twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<QaExample> ParseLine(const json& row, const std::string& where, QaAnswers rule) {
  if (!row.is_object()) return Error(where, "expected a JSON object");
  QaExample example;
  example.where = where;
  XLMR_ASSIGN_OR_RETURN(example.id, StringField(row, "id", where));
  const std::string named = absl::StrCat(where, ": id '", example.id, "'");
  XLMR_ASSIGN_OR_RETURN(example.question, StringField(row, "question", named));
  XLMR_ASSIGN_OR_RETURN(example.context, StringField(row, "context", named));
  if (rule == QaAnswers::kOptional && !row.contains("answers")) {
    example.has_answers = false;
    return example;
  }
  XLMR_ASSIGN_OR_RETURN(const json* answers,
                        Field(row, "answers", json::value_t::object, "an object", named));
  XLMR_ASSIGN_OR_RETURN(const json* texts,
                        Field(*answers, "text", json::value_t::array, "a list", named));
  XLMR_ASSIGN_OR_RETURN(const json* starts,
                        Field(*answers, "answer_start", json::value_t::array, "a list", named));
  if (texts->size() != starts->size()) {
    return Error(named, absl::StrCat("answers has ", texts->size(), " texts but ",
                                     starts->size(), " answer_start values"));
  }
  for (size_t i = 0; i < texts->size(); ++i) {
    if (!(*texts)[i].is_string()) return Error(named, "answers.text must hold strings");
    XLMR_ASSIGN_OR_RETURN(int64_t start, AnswerStart((*starts)[i], named));
    example.answers.push_back({(*texts)[i].get<std::string>(), start, 0});
  }
  return example;
}

absl::StatusOr<std::vector<QaExample>> ReadJsonLines(const std::string& path,
                                                     absl::string_view content, QaAnswers rule) {
  std::vector<QaExample> examples;
  std::unordered_set<std::string> ids;
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == absl::string_view::npos) continue;
    const json row = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded()) {
      return internal::LineError(path, line_number, "not a valid JSON line");
    }
    XLMR_ASSIGN_OR_RETURN(QaExample example,
                          ParseLine(row, absl::StrCat(path, ":", line_number), rule));
    example.line = line_number;
    XLMR_RETURN_IF_ERROR(FinishExample(&example, &ids));
    examples.push_back(std::move(example));
  }
  return examples;
}

absl::StatusOr<std::vector<QaExample>> ReadSquad(const std::string& path,
                                                 absl::string_view content, QaAnswers rule) {
  const json root = json::parse(content.begin(), content.end(), nullptr, false);
  if (root.is_discarded()) return Error(path, "not valid JSON");
  if (!root.is_object()) return Error(path, "expected a SQuAD object with \"data\"");
  XLMR_ASSIGN_OR_RETURN(const json* data,
                        Field(root, "data", json::value_t::array, "a list", path));
  std::vector<QaExample> examples;
  std::unordered_set<std::string> ids;
  for (size_t a = 0; a < data->size(); ++a) {
    const std::string at_article = absl::StrCat(path, ": data[", a, "]");
    if (!(*data)[a].is_object()) return Error(at_article, "expected an object");
    XLMR_ASSIGN_OR_RETURN(const json* paragraphs, Field((*data)[a], "paragraphs",
                                                        json::value_t::array, "a list",
                                                        at_article));
    for (size_t p = 0; p < paragraphs->size(); ++p) {
      const std::string at_paragraph = absl::StrCat(at_article, ".paragraphs[", p, "]");
      const json& paragraph = (*paragraphs)[p];
      if (!paragraph.is_object()) return Error(at_paragraph, "expected an object");
      XLMR_ASSIGN_OR_RETURN(std::string context, StringField(paragraph, "context", at_paragraph));
      XLMR_ASSIGN_OR_RETURN(const json* qas, Field(paragraph, "qas", json::value_t::array,
                                                   "a list", at_paragraph));
      for (size_t q = 0; q < qas->size(); ++q) {
        const std::string at_qa = absl::StrCat(at_paragraph, ".qas[", q, "]");
        const json& qa = (*qas)[q];
        if (!qa.is_object()) return Error(at_qa, "expected an object");
        QaExample example;
        example.where = path;
        XLMR_ASSIGN_OR_RETURN(example.id, StringField(qa, "id", at_qa));
        const std::string named = absl::StrCat(path, ": id '", example.id, "'");
        XLMR_ASSIGN_OR_RETURN(example.question, StringField(qa, "question", named));
        example.context = context;
        const bool given = rule == QaAnswers::kRequired || qa.contains("answers");
        example.has_answers = given;
        static const json kNoAnswers = json::array();
        const json* answers = &kNoAnswers;
        if (given) {
          XLMR_ASSIGN_OR_RETURN(answers, Field(qa, "answers", json::value_t::array, "a list", named));
        }
        for (const json& answer : *answers) {
          if (!answer.is_object()) return Error(named, "answers must hold objects");
          XLMR_ASSIGN_OR_RETURN(std::string text, StringField(answer, "text", named));
          const auto start = answer.find("answer_start");
          if (start == answer.end()) return Error(named, "missing \"answer_start\"");
          XLMR_ASSIGN_OR_RETURN(int64_t answer_start, AnswerStart(*start, named));
          example.answers.push_back({std::move(text), answer_start, 0});
        }
        XLMR_RETURN_IF_ERROR(FinishExample(&example, &ids));
        examples.push_back(std::move(example));
      }
    }
  }
  return examples;
}

}  // namespace

absl::StatusOr<std::vector<QaExample>> ReadQaExamples(const std::string& path, QaAnswers answers) {
  XLMR_ASSIGN_OR_RETURN(std::string bytes, io::ReadWholeFile(path));
  const absl::string_view content = internal::SkipByteOrderMark(bytes);
  const std::string extension = internal::LowerExtension(path);
  absl::StatusOr<std::vector<QaExample>> examples;
  if (extension == ".json") {
    examples = ReadSquad(path, content, answers);
  } else if (extension == ".jsonl") {
    examples = ReadJsonLines(path, content, answers);
  } else {
    return Error(path, "question answering reads .json (SQuAD) or .jsonl (one example a line)");
  }
  if (examples.ok() && examples->empty()) return Error(path, "no examples");
  return examples;
}

}  // namespace xlmr::data
