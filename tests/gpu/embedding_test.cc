// framework/ops/embedding.h on CUDA tensors (kernels/cuda/embedding.h) against the CPU backend.
//
// Tolerances:
//   forward (f32 and f16 outputs)               | bit-equal: a copy and one rounding
//   backward, all ids distinct                  | bit-equal: one fp32 addition per table element
//   backward, repeated ids (f32 and f16 dy)     | bit-equal: both add a row's contributions in
//       token order onto the starting value (the GPU after a stable sort by id); run twice, the
//       GPU must also give the same bits again (no atomics)
//   padding row                                 | bit-equal to its starting value (untouched)
// Skipped (with the reason) when no GPU is visible.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "framework/ops/embedding.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cuda/device_context.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::OnGpu;
using testing::RandomIds;
using testing::RandomTensor;


class CudaEmbeddingTest : public testing::GpuTest {};

// Ids 0, 1, ..., count - 1 in a shuffled order, as an i32 CPU tensor of `shape`.
Tensor DistinctIds(const Shape& shape, uint32_t seed) {
  Tensor ids = Tensor::Zeros(shape, DType::kI32);
  int32_t* data = ids.data<int32_t>();
  std::iota(data, data + ids.numel(), 0);
  std::shuffle(data, data + ids.numel(), std::mt19937(seed));
  return ids;
}

struct TableCase {
  int64_t vocab_size, width;
  Shape ids_shape;
};

// One token of width 1, three tokens of width 1000 (no multiple of any block size), a
// [2, 7] batch of width 768, and a [4, 128] batch of width 1024.
const std::vector<TableCase>& Cases() {
  static const std::vector<TableCase> cases = {
      {1, 1, {1}}, {5, 1000, {3}}, {50, 768, {2, 7}}, {600, 1024, {4, 128}}};
  return cases;
}

std::string Name(const char* what, const TableCase& c, DType dtype) {
  return std::string(what) + " " + DTypeName(dtype) + " V=" + std::to_string(c.vocab_size) +
         " H=" + std::to_string(c.width) + " ids " + ShapeString(c.ids_shape);
}

TEST_F(CudaEmbeddingTest, ForwardMatchesCpuBitForBit) {
  uint32_t seed = 1;
  for (const TableCase& c : Cases()) {
    const Tensor table = RandomTensor({c.vocab_size, c.width}, DType::kF32, seed++);
    const Tensor ids = RandomIds(c.ids_shape, static_cast<int32_t>(c.vocab_size), seed++);
    for (DType out : {DType::kF32, DType::kF16, DType::kBF16}) {
      ExpectBitEqual(Name("Embedding", c, out), ops::Embedding(OnGpu(table), OnGpu(ids), out),
                     ops::Embedding(table, ids, out));
    }
  }
}

TEST_F(CudaEmbeddingTest, BackwardWithDistinctIdsMatchesCpuBitForBit) {
  uint32_t seed = 100;
  for (const TableCase& c : Cases()) {
    if (NumElements(c.ids_shape) > c.vocab_size) continue;  // ids cannot all be distinct
    Shape dy_shape = c.ids_shape;
    dy_shape.push_back(c.width);
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Tensor ids = DistinctIds(c.ids_shape, seed++);
      const Tensor dy = RandomTensor(dy_shape, dtype, seed++);
      Tensor dtable_cpu = RandomTensor({c.vocab_size, c.width}, DType::kF32, seed++);
      Tensor dtable_gpu = OnGpu(dtable_cpu);
      ops::EmbeddingBackward(dy, ids, /*padding_idx=*/-1, &dtable_cpu);
      ops::EmbeddingBackward(OnGpu(dy), OnGpu(ids), /*padding_idx=*/-1, &dtable_gpu);
      ExpectBitEqual(Name("EmbeddingBackward (distinct ids)", c, dtype), dtable_gpu, dtable_cpu);
    }
  }
}

TEST_F(CudaEmbeddingTest, BackwardWithRepeatedIdsAndPaddingMatchesCpu) {
  // 512 tokens over 10 ids: every row gets ~50 contributions; row 1 is padding.
  const int64_t vocab_size = 10, width = 1000, padding_idx = 1;
  const Shape ids_shape = {4, 128};
  uint32_t seed = 200;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor ids = RandomIds(ids_shape, static_cast<int32_t>(vocab_size), seed++);
    const Tensor dy = RandomTensor({4, 128, width}, dtype, seed++);
    const uint32_t start_seed = seed++;  // the same starting gradient, in two buffers
    const Tensor start = RandomTensor({vocab_size, width}, DType::kF32, start_seed);
    Tensor dtable_cpu = RandomTensor({vocab_size, width}, DType::kF32, start_seed);
    Tensor dtable_gpu = OnGpu(start);
    ops::EmbeddingBackward(dy, ids, padding_idx, &dtable_cpu);
    ops::EmbeddingBackward(OnGpu(dy), OnGpu(ids), padding_idx, &dtable_gpu);
    const std::string what = std::string("EmbeddingBackward (repeated ids) ") + DTypeName(dtype);
    ExpectBitEqual(what, dtable_gpu, dtable_cpu);
    Tensor again = OnGpu(start);
    ops::EmbeddingBackward(OnGpu(dy), OnGpu(ids), padding_idx, &again);
    ExpectBitEqual(what + ", second run", again, dtable_gpu.ToDevice(Device::kCpu));
    ExpectBitEqual(what + ", padding row", dtable_gpu.Slice(padding_idx, padding_idx + 1),
                   start.Slice(padding_idx, padding_idx + 1));
  }
}

// Production shapes: the token-type table of XLM-R (one row: all B x S = 16 x 512 tokens add onto
// it, the longest possible run) and XLM-R large's word table width with frequent ids (a
// 250002-row table is 1 GB; 30000 rows keep the same width and id-run structure). Bit for bit:
// every element still adds its run in position order, whatever the block layout.
TEST_F(CudaEmbeddingTest, BackwardAtProductionShapesMatchesCpuBitForBit) {
  struct Shape3 {
    int64_t vocab_size, width;
    Shape ids_shape;
  };
  uint32_t seed = 300;
  for (const Shape3& c : {Shape3{1, 1024, {16, 512}}, Shape3{1, 768, {64, 128}},
                          Shape3{30000, 1024, {16, 512}}}) {
    // Frequent ids for the word table: a tenth of the tokens share 8 ids, as common words do.
    Tensor ids = RandomIds(c.ids_shape, static_cast<int32_t>(c.vocab_size), seed++);
    for (int64_t i = 0; i < ids.numel(); i += 10) ids.data<int32_t>()[i] = static_cast<int32_t>(i % 8);
    if (c.vocab_size == 1) ids = Tensor::Zeros(c.ids_shape, DType::kI32);
    Shape dy_shape = c.ids_shape;
    dy_shape.push_back(c.width);
    const Tensor dy = RandomTensor(dy_shape, DType::kF16, seed++);
    const uint32_t start_seed = seed++;
    Tensor dtable_cpu = RandomTensor({c.vocab_size, c.width}, DType::kF32, start_seed);
    Tensor dtable_gpu = OnGpu(RandomTensor({c.vocab_size, c.width}, DType::kF32, start_seed));
    ops::EmbeddingBackward(dy, ids, /*padding_idx=*/c.vocab_size == 1 ? -1 : 1, &dtable_cpu);
    ops::EmbeddingBackward(OnGpu(dy), OnGpu(ids), c.vocab_size == 1 ? -1 : 1, &dtable_gpu);
    ExpectBitEqual("EmbeddingBackward V=" + std::to_string(c.vocab_size) + " H=" +
                       std::to_string(c.width) + " ids " + ShapeString(c.ids_shape),
                   dtable_gpu, dtable_cpu);
  }
}

TEST_F(CudaEmbeddingTest, NoIdsGiveAnEmptyOutputAndLeaveTheGradientUntouched) {
  // An empty batch: nothing may be launched (an empty grid is a launch error).
  const Tensor table = RandomTensor({5, 8}, DType::kF32, 300);
  const Tensor ids = OnGpu(Tensor::Zeros({2, 0}, DType::kI32));
  const Tensor out = ops::Embedding(OnGpu(table), ids, DType::kF16);
  EXPECT_EQ(out.shape(), Shape({2, 0, 8}));
  Tensor dtable = OnGpu(table);
  ops::EmbeddingBackward(OnGpu(Tensor::Zeros({2, 0, 8}, DType::kF16)), ids, -1, &dtable);
  ExpectBitEqual("EmbeddingBackward with no ids", dtable, table);
}

TEST_F(CudaEmbeddingTest, IdOutsideTheVocabularyStopsTheProcess) {
  // The default death-test style forks a process that already runs CUDA threads; "threadsafe"
  // re-executes the test binary instead.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Tensor table = OnGpu(RandomTensor({5, 8}, DType::kF32, 1));
  Tensor ids = Tensor::Zeros({3}, DType::kI32);
  ids.data<int32_t>()[1] = 5;
  EXPECT_DEATH(
      {
        ops::Embedding(table, OnGpu(ids), DType::kF32);
        kernels::cuda::CudaContext::Current().SynchronizeCompute();
      },
      "CUDA error");
}

}  // namespace
}  // namespace xlmr
