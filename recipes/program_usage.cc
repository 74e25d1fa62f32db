#include "recipes/program_usage.h"

#include <iostream>
#include <string>

#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/core/device.h"
#include "framework/ops/cpu_gemm_library.h"

namespace xlmr::recipes {
namespace {

namespace usage = absl::flags_internal;

// --version: there is no release number yet (the project is versioned by its git commits, and
// stamping the commit would relink both binaries at every commit); what differs between
// builds of one commit is whether the CUDA backend is in, and between machines what runs the
// CPU's products (the second line, as metrics.jsonl's first line records it).
std::string VersionString() {
  std::string cuda = "CUDA backend not built (CPU only)";
  if (CudaBackendBuilt()) {
    cuda = CudaBackendVerifiedOnGpu() ? "CUDA backend built and verified on a GPU"
                                      : "CUDA backend built, not yet verified on a GPU (--device=auto runs on the CPU)";
  }
  return absl::StrCat(usage::ShortProgramInvocationName(), " (xlmr_trainer): ", cuda, "\n",
                      "CPU GEMM: ", ops::CpuGemmLibrarySummary(ops::DescribeCpuGemmLibrary()), "\n");
}

}  // namespace

void ConfigureUsage(const char* program, absl::string_view usage_message) {
  // ParseCommandLine sets the name too, but help is printed before it runs.
  usage::SetProgramInvocationName(program);
  absl::SetProgramUsageMessage(usage_message);
  absl::FlagsUsageConfig config;
  config.contains_help_flags = IsProgramFlagFile;
  config.contains_helpshort_flags = IsProgramFlagFile;
  config.contains_helppackage_flags = IsProgramFlagFile;
  config.version_string = VersionString;
  absl::SetFlagsUsageConfig(config);
}

bool IsProgramFlagFile(absl::string_view filename) { return !absl::StrContains(filename, "absl/flags/"); }

bool RecordUsageRequest(absl::string_view name, absl::string_view value) {
  if (name == "h" && value.empty()) name = "help";
  return usage::DeduceUsageFlags(name, value);
}

bool PrintRequestedUsage() {
  if (usage::GetFlagsHelpMode() == usage::HelpMode::kNone) return false;
  // Its return value is the exit status Abseil would give: 1 after help, 0 after --version.
  usage::HandleUsageFlags(std::cout, absl::ProgramUsageMessage());
  std::cout.flush();
  return true;
}

}  // namespace xlmr::recipes
