// Where the matrices of a strided batch sit in a tensor's data: the layout that the GEMMs
// (gemm.h) and the strided cast (cast.h) take. Plain C++ header.
#ifndef XLMR_KERNELS_CUDA_MATRIX_LAYOUT_H_
#define XLMR_KERNELS_CUDA_MATRIX_LAYOUT_H_

#include <cstdint>

namespace xlmr::kernels::cuda {

// All in elements. Matrix i of the batch starts at element i * batch_stride of the tensor (its
// first element is element 0) and is row-major: element (r, col) of matrix i is at
// i * batch_stride + r * ld + col.
struct MatrixLayout {
  int64_t rows = 0;          // as stored (before any transpose)
  int64_t cols = 0;          // as stored
  int64_t ld = 0;            // from one row to the next; >= cols
  int64_t batch_stride = 0;  // from one matrix to the next (0: the same matrix for every i)
};

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_MATRIX_LAYOUT_H_
