// Paths as the user means them, and the files shipped with the recipes.
#ifndef XLMR_RECIPES_RUNFILES_H_
#define XLMR_RECIPES_RUNFILES_H_

#include <string>

namespace xlmr::recipes {

// A path from a flag: relative paths are taken from the directory the user ran `bazel run`
// in (BUILD_WORKING_DIRECTORY), not from the runfiles tree bazel starts the binary in.
std::string UserPath(const std::string& path);

// Absolute path of a data file shipped with the binary (e.g. "recipes/data/langid/train.tsv"),
// found in the runfiles tree (RUNFILES_DIR, <argv0>.runfiles, or the working directory).
std::string ShippedFile(const std::string& workspace_relative_path);

// Call once from main with argv[0].
void SetProgramPath(const char* argv0);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_RUNFILES_H_
