#include "recipes/runfiles.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace xlmr::recipes {
namespace {

constexpr char kWorkspace[] = "xlmr_trainer";

std::string& ProgramPath() {
  static std::string path;
  return path;
}

}  // namespace

void SetProgramPath(const char* argv0) { ProgramPath() = argv0 == nullptr ? "" : argv0; }

std::string UserPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* user_dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (user_dir == nullptr || *user_dir == '\0') return path;
  return std::string(user_dir) + "/" + path;
}

std::string ShippedFile(const std::string& workspace_relative_path) {
  namespace fs = std::filesystem;
  std::vector<std::string> roots;
  if (const char* dir = std::getenv("RUNFILES_DIR")) roots.push_back(std::string(dir) + "/" + kWorkspace);
  if (!ProgramPath().empty()) roots.push_back(ProgramPath() + ".runfiles/" + kWorkspace);
  roots.push_back(".");
  for (const std::string& root : roots) {
    const fs::path candidate = fs::path(root) / workspace_relative_path;
    std::error_code error;
    if (fs::exists(candidate, error)) return fs::absolute(candidate, error).string();
  }
  return workspace_relative_path;  // missing: the caller's open reports the path
}

}  // namespace xlmr::recipes
