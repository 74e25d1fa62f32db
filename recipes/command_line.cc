#include "recipes/command_line.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "recipes/program_usage.h"

namespace xlmr::recipes {
namespace {

// Abseil follows nested flagfiles without a limit, so a file that includes itself never ends;
// no honest command line nests this deep.
constexpr int kMaxFlagfileDepth = 16;

// One argument and where it came from: "" for the command line, "FILE:LINE" for a flagfile's
// line, "FLAGS_name" for --fromenv; errors start with it.
struct Argument {
  std::string text;
  std::string origin;
};

absl::Status Error(const Argument& argument, const std::string& message) {
  return absl::InvalidArgumentError(
      argument.origin.empty() ? message : absl::StrCat(argument.origin, ": ", message));
}

// The arguments of one flagfile, by Abseil's rules (command_line.h).
absl::StatusOr<std::vector<Argument>> ReadFlagfile(const Argument& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error(flag, absl::StrCat("--flagfile=", path, ": cannot open: ", std::strerror(errno)));
  std::vector<Argument> arguments;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const std::string origin = absl::StrCat(path, ":", line_number);
    const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    if (stripped[0] != '-') {
      return Error({line, origin}, absl::StrCat("expected a --flag, found '", line, "' (a flagfile holds one flag per line)"));
    }
    arguments.push_back({std::string(stripped), origin});
  }
  if (in.bad()) return Error(flag, absl::StrCat("--flagfile=", path, ": read failed: ", std::strerror(errno)));
  return arguments;
}

class Checker {
 public:
  // Checks `arguments`, appending what ParseCommandLine is to see to expanded_.
  absl::Status Check(const std::vector<Argument>& arguments, int depth);
  std::vector<std::string> TakeExpanded() { return std::move(expanded_); }

 private:
  absl::Status ExpandFlagfiles(const Argument& flag, const std::string& value, int depth);
  absl::Status ExpandFromEnv(const Argument& flag, const std::string& name, const std::string& value, int depth);

  std::vector<std::string> expanded_;
};

absl::Status Checker::ExpandFlagfiles(const Argument& flag, const std::string& value, int depth) {
  if (depth >= kMaxFlagfileDepth) {
    return Error(flag, absl::StrCat("--flagfile=", value, ": flagfiles nested more than ", kMaxFlagfileDepth,
                                    " deep (does one include itself?)"));
  }
  for (const absl::string_view path : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    absl::StatusOr<std::vector<Argument>> arguments = ReadFlagfile(flag, std::string(path));
    if (!arguments.ok()) return arguments.status();
    if (absl::Status status = Check(*arguments, depth + 1); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status Checker::ExpandFromEnv(const Argument& flag, const std::string& name, const std::string& value,
                                    int depth) {
  for (const absl::string_view listed : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    const std::string variable = absl::StrCat("FLAGS_", listed);
    if (listed == "fromenv" || listed == "tryfromenv" || listed == "flagfile") {
      return Error(flag, absl::StrCat("--", name, "=", value, ": --", listed, " cannot come from the environment"));
    }
    const char* from_env = std::getenv(variable.c_str());
    if (from_env == nullptr) {
      if (name == "tryfromenv") continue;
      return Error(flag, absl::StrCat("--fromenv=", value, ": ", variable, " is not set"));
    }
    if (absl::Status status = Check({{absl::StrCat("--", listed, "=", from_env), variable}}, depth + 1); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status Checker::Check(const std::vector<Argument>& arguments, int depth) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument& argument = arguments[i];
    absl::string_view arg = argument.text;
    if (arg == "--" || !absl::StartsWith(arg, "-") || arg == "-") {
      return Error(argument, absl::StrCat("unexpected argument '", arg,
                                          "': this program takes only --flags (--helpfull lists them)"));
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
          return Error(argument, absl::StrCat("--", name, ": the negated form takes no value; write --",
                                              name.substr(2), "=false"));
        }
        expanded_.push_back(argument.text);
        continue;
      }
    }
    // Abseil's usage flags are no registered flags; ParseCommandLine never sees them (it
    // would exit 1 after printing): main prints what they ask for instead.
    if (flag == nullptr && RecordUsageRequest(name, has_value ? arg.substr(equals + 1) : "")) continue;
    if (flag == nullptr || flag->IsRetired()) {
      return Error(argument, absl::StrCat("--", name, ": unknown flag (--helpfull lists the flags)"));
    }
    std::string value;
    bool value_is_next = false;
    if (has_value) {
      value = std::string(arg.substr(equals + 1));
    } else if (flag->IsOfType<bool>()) {
      value = "true";
    } else if (i + 1 < arguments.size()) {
      value = arguments[i + 1].text;  // --name value
      value_is_next = true;
    } else {
      return Error(argument, absl::StrCat("--", name, ": missing value"));
    }
    // The generator flags are replaced by what they generate, never set here: setting
    // --flagfile would make ParseCommandLine read the files once more.
    if (name == "flagfile") {
      if (absl::Status status = ExpandFlagfiles(argument, value, depth); !status.ok()) return status;
    } else if (name == "fromenv" || name == "tryfromenv") {
      if (absl::Status status = ExpandFromEnv(argument, name, value, depth); !status.ok()) return status;
    } else {
      std::string error;
      if (!flag->ParseFrom(value, &error)) {
        return Error(argument, absl::StrCat("--", name, ": invalid value '", value, "' (", error, ")"));
      }
      expanded_.push_back(argument.text);
      if (value_is_next) expanded_.push_back(value);
    }
    if (value_is_next) ++i;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> CheckCommandLine(int argc, char** argv) {
  std::vector<Argument> arguments;
  for (int i = 1; i < argc; ++i) arguments.push_back({argv[i], ""});
  Checker checker;
  if (absl::Status status = checker.Check(arguments, 0); !status.ok()) return status;
  return checker.TakeExpanded();
}

std::optional<int> ParseCommandLineOrStop(int argc, char** argv, const char* program,
                                          std::vector<std::string>* checked_arguments) {
  absl::StatusOr<std::vector<std::string>> arguments = CheckCommandLine(argc, argv);
  if (!arguments.ok()) {
    std::fprintf(stderr, "%s: %s\n", program, std::string(arguments.status().message()).c_str());
    return 2;
  }
  if (PrintRequestedUsage()) return 0;
  std::vector<std::string> parsed = *arguments;  // ParseCommandLine takes mutable strings
  std::vector<char*> parse_argv = {argv[0]};
  for (std::string& argument : parsed) parse_argv.push_back(argument.data());
  absl::ParseCommandLine(static_cast<int>(parse_argv.size()), parse_argv.data());
  if (checked_arguments != nullptr) *checked_arguments = *std::move(arguments);
  return std::nullopt;
}

}  // namespace xlmr::recipes
