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
#ifndef XLMR_RECIPES_COMMAND_LINE_H_
#define XLMR_RECIPES_COMMAND_LINE_H_

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

// absl::ParseCommandLine on `program` (argv[0]) followed by CheckCommandLine's `arguments`.
void ParseCheckedCommandLine(char* program, std::vector<std::string> arguments);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_COMMAND_LINE_H_
