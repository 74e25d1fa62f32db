// framework/ops/pooling.h, row_normalize.h and row_dot.h on CUDA tensors against the CPU backend.
//
// Tolerance: none. Both backends add the same floats in the same order and round each operation
// once with no fused multiply-add (kernels/common/row_normalize.h and row_dot.h; the pooling
// kernels' sums in token order), so the GPU must give the CPU's bits, the zeros at padding
// included.
// Skipped (with the reason) when no GPU is visible.
#include <vector>

#include "framework/ops/pooling.h"
#include "framework/ops/row_dot.h"
#include "framework/ops/row_normalize.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::OnGpu;
using testing::RandomTensor;

class CudaPoolingTest : public testing::GpuTest {};

Tensor Ids(const Shape& shape, const std::vector<int32_t>& values) {
  Tensor t = Tensor::Zeros(shape, DType::kI32);
  for (size_t i = 0; i < values.size(); ++i) t.data<int32_t>()[i] = values[i];
  return t;
}

TEST_F(CudaPoolingTest, MaskedMeanPoolMatchesCpuBitForBit) {
  // Lengths 128, 1, 77 and 128 of S = 128 (a base-sized width), plus an all-padding row.
  const int64_t batch = 5, seq = 128, hidden = 768;
  std::vector<int32_t> mask(batch * seq, 0);
  const std::vector<int64_t> lengths = {128, 1, 77, 128, 0};
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < lengths[b]; ++s) mask[b * seq + s] = 1;
  }
  const Tensor mask_cpu = Ids({batch, seq}, mask);
  const Tensor x = RandomTensor({batch, seq, hidden}, DType::kF32, 1);
  ExpectBitEqual("MaskedMeanPool", ops::MaskedMeanPool(OnGpu(x), OnGpu(mask_cpu)), ops::MaskedMeanPool(x, mask_cpu));
  const Tensor dy = RandomTensor({batch, hidden}, DType::kF32, 2);
  ExpectBitEqual("MaskedMeanPoolBackward", ops::MaskedMeanPoolBackward(OnGpu(dy), OnGpu(mask_cpu)),
                 ops::MaskedMeanPoolBackward(dy, mask_cpu));
}

TEST_F(CudaPoolingTest, SegmentMeanPoolMatchesCpuBitForBit) {
  const int64_t hidden = 1024;
  const Tensor cu_seqlens = Ids({5}, {0, 3, 4, 200, 512});
  const Tensor x = RandomTensor({512, hidden}, DType::kF32, 3);
  ExpectBitEqual("SegmentMeanPool", ops::SegmentMeanPool(OnGpu(x), OnGpu(cu_seqlens)),
                 ops::SegmentMeanPool(x, cu_seqlens));
  const Tensor dy = RandomTensor({4, hidden}, DType::kF32, 4);
  ExpectBitEqual("SegmentMeanPoolBackward", ops::SegmentMeanPoolBackward(OnGpu(dy), OnGpu(cu_seqlens), 512),
                 ops::SegmentMeanPoolBackward(dy, cu_seqlens, 512));
}

TEST_F(CudaPoolingTest, NormalizeRowsMatchesCpuBitForBit) {
  for (const Shape& shape : {Shape{1, 1}, Shape{3, 768}, Shape{1000, 1024}}) {
    const Tensor x = RandomTensor(shape, DType::kF32, 5);
    ExpectBitEqual("NormalizeRows " + ShapeString(shape), ops::NormalizeRows(OnGpu(x), 20.0f),
                   ops::NormalizeRows(x, 20.0f));
    const Tensor dy = RandomTensor(shape, DType::kF32, 6);
    Tensor dx_cpu = Tensor::Zeros(shape, DType::kF32);
    Tensor dx_gpu = OnGpu(dx_cpu);
    ops::NormalizeRowsBackward(dy, x, 20.0f, &dx_cpu);
    ops::NormalizeRowsBackward(OnGpu(dy), OnGpu(x), 20.0f, &dx_gpu);
    ExpectBitEqual("NormalizeRowsBackward " + ShapeString(shape), dx_gpu, dx_cpu);
  }
}

TEST_F(CudaPoolingTest, RowDotsMatchCpuBitForBit) {
  // One element, a base-sized width, a batch wider than a block of threads, and no rows.
  for (const Shape& shape : {Shape{1, 1}, Shape{3, 768}, Shape{1000, 1024}, Shape{0, 8}}) {
    const Tensor a = RandomTensor(shape, DType::kF32, 7);
    const Tensor b = RandomTensor(shape, DType::kF32, 8);
    ExpectBitEqual("RowDots " + ShapeString(shape), ops::RowDots(OnGpu(a), OnGpu(b)), ops::RowDots(a, b));
    const Tensor d_dots = RandomTensor({shape[0]}, DType::kF32, 9);
    Tensor da_cpu = Tensor::Zeros(shape, DType::kF32), db_cpu = Tensor::Zeros(shape, DType::kF32);
    Tensor da_gpu = OnGpu(da_cpu), db_gpu = OnGpu(db_cpu);
    ops::RowDotsBackward(d_dots, a, b, &da_cpu, &db_cpu);
    ops::RowDotsBackward(OnGpu(d_dots), OnGpu(a), OnGpu(b), &da_gpu, &db_gpu);
    ExpectBitEqual("RowDotsBackward da " + ShapeString(shape), da_gpu, da_cpu);
    ExpectBitEqual("RowDotsBackward db " + ShapeString(shape), db_gpu, db_cpu);
  }
}

}  // namespace
}  // namespace xlmr
