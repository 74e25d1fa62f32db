// What the binaries print for Abseil's usage flags, and the exit status after it.
//
//   --help, -h, --helpshort, --helppackage   the usage message and this program's flags
//   --helpfull                               the usage message and every flag, Abseil's own too
//   --helpon=FILE, --helpmatch=TEXT          the flags of FILE, or whose name, file or help holds TEXT
//   --version                                the program and its build (CUDA backend or not), then
//                                            what runs the CPU's products (framework/ops/cpu_gemm_library.h)
//   --only_check_args                        nothing: the command line was checked
//
// Abseil prints all of it (each flag's help text, default and, when set, current value);
// we choose what --help lists, the version line, and the exit status: 0, as GNU and Python
// programs exit after --help, where absl::ParseCommandLine exits 1 (docs/DECISIONS.md).
// `-h` is --help (Abseil defines no flag h, and Hugging Face's scripts take -h).
//
// Abseil offers its help printer only inside ParseCommandLine, which the programs call after
// their own check of the command line (command_line.h): that check recognises the usage flags
// (RecordUsageRequest), and main prints and exits before parsing (PrintRequestedUsage). This
// reaches Abseil's flags_internal usage functions, stable in the Abseil we build against
// (Debian's 20220623).
#ifndef XLMR_RECIPES_PROGRAM_USAGE_H_
#define XLMR_RECIPES_PROGRAM_USAGE_H_

#include "absl/strings/string_view.h"

namespace xlmr::recipes {

// Call first in main: `program` (argv[0]) names the program in what is printed; `usage` is the
// paragraph --help prints before the flags (what the program does, how it is called).
void ConfigureUsage(const char* program, absl::string_view usage);

// Whether a flag defined in `filename` is the program's own, not Abseil's (--flagfile,
// --fromenv, ...): what --help lists.
bool IsProgramFlagFile(absl::string_view filename);

// Whether `--name` (`value`: after '=', empty when none) is a usage flag; if so it is recorded,
// the last one winning, as in Abseil.
bool RecordUsageRequest(absl::string_view name, absl::string_view value);

// When a usage flag was recorded: prints what it asks for on stdout and returns true (the
// caller then exits 0, running nothing); else false.
bool PrintRequestedUsage();

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_PROGRAM_USAGE_H_
