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
// Not covered: the contents of a --flagfile (Abseil reads them itself).
#ifndef XLMR_RECIPES_COMMAND_LINE_H_
#define XLMR_RECIPES_COMMAND_LINE_H_

#include "absl/status/status.h"

namespace xlmr::recipes {

// OK when every argument after argv[0] is a registered flag with a value its type accepts.
// Otherwise InvalidArgument, one line naming the first bad argument: an unknown flag, a value
// of the wrong type, a missing value, a negated non-boolean, or a positional argument (the
// programs take none). Sets the flags it checks (ParseCommandLine sets them again, the same).
absl::Status CheckCommandLine(int argc, char** argv);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_COMMAND_LINE_H_
