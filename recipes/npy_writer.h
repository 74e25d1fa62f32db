// xlmr_predict's sentence embeddings as a NumPy .npy file (format version 1.0: the magic
// "\x93NUMPY", a header {'descr': '<f4', 'fortran_order': False, 'shape': (rows, width), }
// padded to a multiple of 64 bytes, then the rows as little-endian float32), which
// numpy.load reads as the float32 matrix sentence-transformers' encode() returns, with no code
// of ours. Written through StagedOutputFile: whole or not at all.
#ifndef XLMR_RECIPES_NPY_WRITER_H_
#define XLMR_RECIPES_NPY_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "recipes/staged_output_file.h"

namespace xlmr::recipes {

// The .npy header of a C-ordered float32 matrix of `rows` x `width`.
std::string NpyFloat32MatrixHeader(int64_t rows, int64_t width);

class NpyMatrixWriter {
 public:
  // Creates `path`.tmp with the header of a rows x width float32 matrix.
  static absl::StatusOr<NpyMatrixWriter> Open(const std::string& path, int64_t rows, int64_t width);

  // Appends whole rows (values.size() a multiple of width), in order.
  absl::Status Append(const std::vector<float>& values);
  // Renames the file into place once exactly `rows` rows were appended (checked).
  absl::Status Commit();
  int64_t rows_written() const { return rows_written_; }

 private:
  NpyMatrixWriter(StagedOutputFile file, int64_t rows, int64_t width)
      : file_(std::move(file)), rows_(rows), width_(width) {}

  StagedOutputFile file_;
  int64_t rows_, width_;
  int64_t rows_written_ = 0;
};

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_NPY_WRITER_H_
