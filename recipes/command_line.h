// The command line of both binaries, checked before Abseil parses it.
//
// absl::ParseCommandLine prints its own multi-line report and exits with status 1 on an
// unknown flag or a malformed value; the programs promise one line naming the flag and exit
// status 2 for every invalid input (docs/CONTRACT.md). CheckCommandLine reads argv the way
// ParseCommandLine does (--name=value, --name value, --bool, --nobool, one or two dashes) and
// finds those errors first, through the flags reflection API, so ParseCommandLine is only
// called on a command line it accepts. Values that parse but are out of range are the
// programs' own checks (e.g. ReadFinetuneFlags).
//
// Abseil's generator flags are expanded here, with Abseil's rules, so their contents are
// checked like the command line itself:
//   --flagfile=F1,F2   the lines of F1 then F2 take the flag's place: blank lines and lines
//                      starting with '#' skipped, leading whitespace stripped, every other
//                      line one argument that must start with '-'; a --flagfile inside a
//                      file is expanded in its turn (relative paths are the working
//                      directory's, as in Abseil);
//   --fromenv=a,b      --a=$FLAGS_a --b=$FLAGS_b (each variable must be set);
//   --tryfromenv=a,b   the same for the variables that are set.
// An error inside a flagfile names the file and line ("flags.txt:3: --max_steps: invalid
// value ..."), one from the environment its variable.
//
// Abseil's usage flags (--help, -h, --helpfull, --version, ...: program_usage.h) are valid:
// they are recorded for PrintRequestedUsage and left out of the result.
#ifndef XLMR_RECIPES_COMMAND_LINE_H_
#define XLMR_RECIPES_COMMAND_LINE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace xlmr::recipes {

// On success the arguments after argv[0] with the generator flags expanded, in the order
// Abseil applies them; the caller hands these (behind argv[0]) to absl::ParseCommandLine, so
// it parses what was checked and reads no file of its own.
// Otherwise InvalidArgument, one line naming the first bad argument: an unknown flag, a value
// of the wrong type, a missing value, a negated non-boolean, a positional argument (the
// programs take none), a flagfile that cannot be read or holds a line that is not a flag,
// flagfiles nested too deep (one including itself), or an unset --fromenv variable.
// Sets the flags it checks (ParseCommandLine sets them again, the same).
absl::StatusOr<std::vector<std::string>> CheckCommandLine(int argc, char** argv);

// What both programs' main does with the command line before any work: CheckCommandLine (on
// an error, one line "<program>: <message>" on stderr and exit status 2); when a usage flag
// was given, PrintRequestedUsage (exit status 0); else absl::ParseCommandLine on argv[0] and
// the checked arguments, which it reads as they are (no file of its own). Returns the exit
// status when the program is to stop now; otherwise nullopt, with every flag set and
// `checked_arguments` (when not null) holding CheckCommandLine's result.
// Call ConfigureUsage (program_usage.h) first.
std::optional<int> ParseCommandLineOrStop(int argc, char** argv, const char* program,
                                          std::vector<std::string>* checked_arguments);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_COMMAND_LINE_H_
