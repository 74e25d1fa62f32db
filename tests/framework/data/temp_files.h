// Test helper: files under the test's temporary directory.
#ifndef XLMR_TESTS_FRAMEWORK_DATA_TEMP_FILES_H_
#define XLMR_TESTS_FRAMEWORK_DATA_TEMP_FILES_H_

#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace xlmr::data::testing {

// Writes `content` (bytes, unchanged) to <TempDir>/<name> and returns the path.
inline std::string WriteTempFile(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace xlmr::data::testing

#endif  // XLMR_TESTS_FRAMEWORK_DATA_TEMP_FILES_H_
