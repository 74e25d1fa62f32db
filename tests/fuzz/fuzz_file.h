// The readers under fuzzing take a path, as the trainer calls them: each input is written to
// a file of this process (one per name, rewritten per input) and the reader opens it.
#ifndef XLMR_TESTS_FUZZ_FUZZ_FILE_H_
#define XLMR_TESTS_FUZZ_FUZZ_FILE_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace xlmr::fuzz {

// A directory of this process under the system temporary directory (created once).
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string path = (std::filesystem::temp_directory_path() / ("xlmr_fuzz." + std::to_string(getpid()))).string();
    std::filesystem::create_directories(path);
    return path;
  }();
  return dir;
}

// Writes the input to ScratchDir()/name and returns the path.
inline std::string WriteInput(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = ScratchDir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

}  // namespace xlmr::fuzz

#endif  // XLMR_TESTS_FUZZ_FUZZ_FILE_H_
