#include "recipes/npy_writer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"

namespace xlmr::recipes {

std::string NpyFloat32MatrixHeader(int64_t rows, int64_t width) {
  std::string dict = absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': (", rows, ", ", width, "), }");
  // magic (6) + version (2) + header length (2) + dict + padding + '\n' = a multiple of 64.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  const uint16_t length = static_cast<uint16_t>(dict.size());
  std::string header("\x93NUMPY\x01\x00", 8);
  header.push_back(static_cast<char>(length & 0xff));
  header.push_back(static_cast<char>(length >> 8));
  return header + dict;
}

absl::StatusOr<NpyMatrixWriter> NpyMatrixWriter::Open(const std::string& path, int64_t rows, int64_t width) {
  XLMR_ASSIGN_OR_RETURN(StagedOutputFile file, StagedOutputFile::Open(path));
  XLMR_RETURN_IF_ERROR(file.Write(NpyFloat32MatrixHeader(rows, width)));
  return NpyMatrixWriter(std::move(file), rows, width);
}

absl::Status NpyMatrixWriter::Append(const std::vector<float>& values) {
  XLMR_CHECK(width_ > 0 && values.size() % width_ == 0) << values.size() << " values for rows of " << width_;
  static_assert(sizeof(float) == 4, "float32");
  // x86-64 and AArch64 store floats little-endian, as '<f4' says.
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  rows_written_ += static_cast<int64_t>(values.size()) / width_;
  XLMR_CHECK_LE(rows_written_, rows_) << "more rows than the header announced";
  return file_.Write(bytes);
}

absl::Status NpyMatrixWriter::Commit() {
  XLMR_CHECK_EQ(rows_written_, rows_) << "rows written";
  return file_.Commit();
}

}  // namespace xlmr::recipes
