#include "recipes/command_line.h"

#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace xlmr::recipes {

absl::Status CheckCommandLine(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--" || !absl::StartsWith(arg, "-") || arg == "-") {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "': this program takes only --flags (--helpfull lists them)"));
    }
    if (!absl::ConsumePrefix(&arg, "--")) absl::ConsumePrefix(&arg, "-");
    const size_t equals = arg.find('=');
    const std::string name(arg.substr(0, equals));
    const bool has_value = equals != absl::string_view::npos;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no")) {  // --nofoo for a boolean foo
      absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && positive->IsOfType<bool>()) {
        if (has_value) {
          return absl::InvalidArgumentError(absl::StrCat("--", name, ": the negated form takes no value; write --",
                                                         name.substr(2), "=false"));
        }
        continue;
      }
    }
    if (flag == nullptr || flag->IsRetired()) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, ": unknown flag (--helpfull lists the flags)"));
    }
    std::string value;
    if (has_value) {
      value = std::string(arg.substr(equals + 1));
    } else if (flag->IsOfType<bool>()) {
      value = "true";
    } else if (i + 1 < argc) {
      value = argv[++i];  // --name value
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--", name, ": missing value"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, ": invalid value '", value, "' (", error, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
