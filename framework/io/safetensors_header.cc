// Parsing the safetensors header: UTF-8, JSON, repeated keys, metadata and entry fields (step 4
// of the reference reader). The data layout is validated afterwards, in safetensors.cc.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "framework/core/status_macros.h"
#include "framework/io/safetensors.h"
#include "framework/io/safetensors_internal.h"
#include "nlohmann/json.hpp"

namespace xlmr::io {
namespace {

using Json = nlohmann::ordered_json;  // keeps the header's key order (= file order)

// Watches nlohmann's parse events and remembers the first key repeated inside one object
// (nlohmann itself keeps the last value silently).
class RepeatedKeyFinder {
 public:
  struct Repeat {
    std::string key;
    std::string owner;  // key of the enclosing object in its parent ("" at the top level)
    size_t depth = 0;   // 1 = top-level object
  };

  bool OnEvent(Json::parse_event_t event, const Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: {
        OpenObject object;
        if (!open_objects_.empty()) object.owner = open_objects_.back().last_key;
        open_objects_.push_back(std::move(object));
        break;
      }
      case Json::parse_event_t::object_end: open_objects_.pop_back(); break;
      case Json::parse_event_t::key: RecordKey(parsed.get<std::string>()); break;
      default: break;
    }
    return true;  // keep every value
  }

  const absl::optional<Repeat>& first_repeat() const { return first_repeat_; }

 private:
  struct OpenObject {
    absl::flat_hash_set<std::string> keys;
    std::string owner;
    std::string last_key;
  };

  void RecordKey(std::string key) {
    OpenObject& object = open_objects_.back();
    if (!object.keys.insert(key).second && !first_repeat_.has_value()) {
      first_repeat_ = Repeat{key, object.owner, open_objects_.size()};
    }
    object.last_key = std::move(key);
  }

  std::vector<OpenObject> open_objects_;
  absl::optional<Repeat> first_repeat_;
};

absl::Status RepeatedKeyError(const std::string& path, const RepeatedKeyFinder::Repeat& repeat) {
  if (repeat.depth == 1 && repeat.key != kMetadataKey) {
    return InvalidTensor(path, "the header lists this tensor name twice", repeat.key);
  }
  if (repeat.depth == 2 && repeat.owner == kMetadataKey) {
    return Invalid(path, absl::StrCat(kMetadataKey, " repeats the key '", repeat.key, "'"));
  }
  if (repeat.depth == 2) {
    return InvalidTensor(path, absl::StrCat("entry repeats the field '", repeat.key, "'"),
                         repeat.owner);
  }
  return Invalid(path, absl::StrCat("header repeats the JSON key '", repeat.key, "'"));
}

// Step 4 of the reference: UTF-8, then JSON; plus our repeated-key rule.
absl::StatusOr<Json> ParseHeaderJson(const std::string& path, absl::string_view header) {
  const size_t bad_byte = FirstInvalidUtf8Byte(header);
  if (bad_byte != absl::string_view::npos) {
    return Invalid(path,
                   absl::StrCat("header is not valid UTF-8 (byte ", bad_byte,
                                " of the header, file offset ", kLengthFieldBytes + bad_byte, ")"));
  }
  // nlohmann ends its input at a NUL byte and skips a leading byte-order mark; JSON (and so
  // the reference) allows neither.
  const size_t nul = header.find('\0');
  if (nul != absl::string_view::npos) {
    return Invalid(
        path, absl::StrCat("header is not valid JSON: NUL byte at byte ", nul, " of the header"));
  }
  if (absl::StartsWith(header, "\xEF\xBB\xBF")) {
    return Invalid(path, "header is not valid JSON: it starts with a byte-order mark");
  }
  RepeatedKeyFinder finder;
  Json root;
  // nlohmann reports syntax errors by throwing; they are turned into a Status right here.
  try {
    root = Json::parse(header.begin(), header.end(),
                       [&finder](int, Json::parse_event_t event, Json& parsed) {
                         return finder.OnEvent(event, parsed);
                       });
  } catch (const Json::exception& error) {
    return Invalid(path, absl::StrCat("header is not valid JSON: ", error.what()));
  }
  if (!root.is_object()) {
    return Invalid(path,
                   absl::StrCat("header is a JSON ", root.type_name(), ", expected an object"));
  }
  if (finder.first_repeat().has_value()) return RepeatedKeyError(path, *finder.first_repeat());
  return root;
}

// A short description of a JSON value for error messages: its text, or its type when long.
std::string Describe(const Json& value) {
  std::string text = value.dump();
  return text.size() <= 40 ? text : absl::StrCat("a JSON ", value.type_name());
}

absl::Status ParseMetadata(const std::string& path, const Json& value,
                           std::map<std::string, std::string>* metadata) {
  if (value.is_null()) return absl::OkStatus();  // serde reads null as "no metadata"
  if (!value.is_object()) {
    return Invalid(path, absl::StrCat(kMetadataKey, " is ", Describe(value),
                                      ", expected an object mapping strings to strings"));
  }
  for (const auto& [key, entry] : value.items()) {
    if (!entry.is_string()) {
      return Invalid(path, absl::StrCat(kMetadataKey, " value of '", key, "' is ", Describe(entry),
                                        ", expected a string"));
    }
    (*metadata)[key] = entry.get<std::string>();
  }
  return absl::OkStatus();
}

absl::Status ParseDtype(const std::string& path, const Json& value, HeaderEntry* entry) {
  if (!value.is_string()) {
    return InvalidTensor(path,
                         absl::StrCat("field 'dtype' is ", Describe(value), ", expected a string"),
                         entry->name);
  }
  entry->dtype = value.get<std::string>();
  if (SafetensorsDtypeBits(entry->dtype) == 0) {
    return InvalidTensor(path, absl::StrCat("unknown dtype '", entry->dtype, "'"), entry->name);
  }
  return absl::OkStatus();
}

absl::Status ParseShape(const std::string& path, const Json& value, HeaderEntry* entry) {
  if (!value.is_array()) {
    return InvalidTensor(path,
                         absl::StrCat("field 'shape' is ", Describe(value),
                                      ", expected an array of non-negative integers"),
                         entry->name);
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& dim = value[i];
    if (!dim.is_number_unsigned()) {
      return InvalidTensor(path,
                           absl::StrCat("shape entry ", i, " is ", Describe(dim),
                                        ", expected a non-negative integer"),
                           entry->name);
    }
    const uint64_t size = dim.get<uint64_t>();
    if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return InvalidTensor(
          path, absl::StrCat("shape entry ", i, " is ", size, ", larger than 2^63-1"), entry->name);
    }
    entry->shape.push_back(static_cast<int64_t>(size));
  }
  return absl::OkStatus();
}

absl::Status ParseOffsets(const std::string& path, const Json& value, HeaderEntry* entry) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number_unsigned() ||
      !value[1].is_number_unsigned()) {
    return InvalidTensor(path,
                         absl::StrCat("field 'data_offsets' is ", Describe(value),
                                      ", expected [begin, end] of non-negative integers"),
                         entry->name);
  }
  entry->begin = value[0].get<uint64_t>();
  entry->end = value[1].get<uint64_t>();
  return absl::OkStatus();
}

// Parses one tensor entry. Unknown fields are ignored, as serde does.
absl::StatusOr<HeaderEntry> ParseEntry(const std::string& path, const std::string& name,
                                       const Json& value) {
  HeaderEntry entry;
  entry.name = name;
  if (!value.is_object()) {
    return InvalidTensor(path, absl::StrCat("entry is ", Describe(value), ", expected an object"),
                         name);
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(field)) {
      return InvalidTensor(path, absl::StrCat("missing field '", field, "'"), name);
    }
  }
  XLMR_RETURN_IF_ERROR(ParseDtype(path, value["dtype"], &entry));
  XLMR_RETURN_IF_ERROR(ParseShape(path, value["shape"], &entry));
  XLMR_RETURN_IF_ERROR(ParseOffsets(path, value["data_offsets"], &entry));
  return entry;
}

}  // namespace

absl::StatusOr<ParsedHeader> ParseHeader(const std::string& path, absl::string_view header) {
  XLMR_ASSIGN_OR_RETURN(const Json root, ParseHeaderJson(path, header));
  ParsedHeader parsed;
  for (const auto& [key, value] : root.items()) {
    if (key == kMetadataKey) {
      XLMR_RETURN_IF_ERROR(ParseMetadata(path, value, &parsed.metadata));
      continue;
    }
    XLMR_ASSIGN_OR_RETURN(HeaderEntry entry, ParseEntry(path, key, value));
    parsed.entries.push_back(std::move(entry));
  }
  return parsed;
}

}  // namespace xlmr::io
