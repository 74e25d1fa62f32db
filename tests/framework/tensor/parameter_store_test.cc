// The flat-buffer layout contract of ParameterStore (framework/tensor/parameter_store.h): every
// parameter's range and every gradient bucket starts at a multiple of 64 elements in all flat
// buffers (masters, gradients, fp16 copy, AdamW moments), the padding is zero and stays zero
// through optimizer steps, and checkpoints see the moments packed as before the padding.
// All comparisons are exact: the layout is integer arithmetic and the copies move bytes.
#include "framework/tensor/parameter_store.h"

#include <cstdint>
#include <string>
#include <vector>

#include "framework/optim/adamw.h"
#include "framework/tensor/half.h"
#include "framework/tensor/storage.h"
#include "gtest/gtest.h"
#include "models/encoder/config.h"
#include "models/encoder/parameter_layout.h"

namespace xlmr {
namespace {

constexpr int64_t kAlign = ParameterStore::kAlignmentElements;

// A small XLM-R whose every size is odd or off any power of two (hidden 36, 3 labels, vocab
// 1001), so that packing the tensors back to back would misalign nearly every range.
models::EncoderConfig OddConfig() {
  models::EncoderConfig config;
  config.vocab_size = 1001;
  config.hidden_size = 36;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 4;
  config.intermediate_size = 100;
  config.max_position_embeddings = 37;
  config.type_vocab_size = 1;
  config.id2label = {"a", "b", "c"};
  return config;
}

// True where `i` lies in no parameter's range.
std::vector<bool> PaddingMask(const ParameterStore& store) {
  std::vector<bool> padding(store.total_elements(), true);
  for (int i = 0; i < store.size(); ++i) {
    for (int64_t k = 0; k < store.range(i).size; ++k) padding[store.range(i).offset + k] = false;
  }
  return padding;
}

TEST(ParameterStoreTest, EveryRangeAndBucketOfTheXlmrLayoutStartsAt64Elements) {
  ParameterStore store(models::MakeParameterLayout(OddConfig()).specs, Device::kCpu);
  store.EnableHalfCopy(DType::kF16);
  int64_t packed = 0;
  for (int i = 0; i < store.size(); ++i) {
    SCOPED_TRACE(store.spec(i).name);
    EXPECT_EQ(store.range(i).offset % kAlign, 0);
    EXPECT_EQ(store.range(i).size, NumElements(store.spec(i).shape));
    if (i > 0) {  // in spec order, no overlap, gap below one alignment step
      const int64_t previous_end = store.range(i - 1).offset + store.range(i - 1).size;
      EXPECT_GE(store.range(i).offset, previous_end);
      EXPECT_LT(store.range(i).offset - previous_end, kAlign);
    }
    // The views themselves: 64 f32 = 256 bytes, 64 f16 = 128 bytes from an aligned base.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(store.param(i).raw_data()) % 256, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(store.grad(i).raw_data()) % 256, 0u);
    if (store.spec(i).read_in_half) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(store.half_param(i).raw_data()) % 128, 0u);
    }
    packed += store.range(i).size;
  }
  EXPECT_EQ(store.packed_elements(), packed);
  EXPECT_EQ(store.total_elements() % kAlign, 0);
  // Buckets start aligned and tile the buffer: each ends where the next begins.
  int64_t at = 0;
  for (const FlatRange& bucket : store.buckets()) {
    EXPECT_EQ(bucket.offset % kAlign, 0);
    EXPECT_EQ(bucket.offset, at);
    at += bucket.size;
  }
  EXPECT_EQ(at, store.total_elements());
  EXPECT_EQ(store.buckets().size(), static_cast<size_t>(OddConfig().num_hidden_layers + 2));
}

// AdamW walks only the ranges: with eps = 0 an update of a padding element would compute
// 0 / 0 = NaN, so this fails if padding were ever part of a segment.
TEST(ParameterStoreTest, PaddingStaysZeroThroughAdamWSteps) {
  ParameterStore store(models::MakeParameterLayout(OddConfig()).specs, Device::kCpu);
  store.EnableHalfCopy(DType::kF16);
  const std::vector<bool> padding = PaddingMask(store);
  std::vector<float> values(store.total_elements());
  for (int64_t k = 0; k < store.total_elements(); ++k) {
    values[k] = padding[k] ? 0.0f : 0.01f * static_cast<float>(k % 97 + 1);
  }
  store.master().CopyFromFloats(values);
  store.grads().CopyFromFloats(values);
  optim::AdamWOptions options;
  options.eps = 0.0;
  options.weight_decay = 0.01;
  optim::AdamW adamw(store, options);
  for (const optim::AdamWSegment& segment : adamw.segments()) {
    EXPECT_EQ(segment.range.offset % kAlign, 0);
  }
  adamw.Step(1e-3);
  adamw.Step(1e-3);
  const std::vector<float> master = store.master().ToFloatVector();
  const std::vector<float> half = store.half_copy().ToFloatVector();
  const FlatRange window = store.half_window();
  const std::vector<float> m = adamw.exp_avg().ToFloatVector();
  const std::vector<float> v = adamw.exp_avg_sq().ToFloatVector();
  int64_t updated = 0;
  for (int64_t k = 0; k < store.total_elements(); ++k) {
    if (padding[k]) {
      ASSERT_EQ(master[k], 0.0f) << "padding element " << k;
      if (k >= window.offset && k < window.offset + window.size) {
        ASSERT_EQ(half[k - window.offset], 0.0f) << "padding element " << k;
      }
      ASSERT_EQ(m[k], 0.0f) << "padding element " << k;
      ASSERT_EQ(v[k], 0.0f) << "padding element " << k;
    } else {
      updated += master[k] != values[k];
    }
  }
  EXPECT_EQ(updated, store.packed_elements());  // every parameter value moved
}

// Under --bf16 the working copy is bf16: each element the masters' value rounded to nearest
// even (FloatToBFloat16), after EnableHalfCopy and again after every AdamW step; a second
// EnableHalfCopy of the other dtype is a programming error.
TEST(ParameterStoreTest, Bf16WorkingCopyFollowsTheMastersRoundedToNearestEven) {
  ParameterStore store(models::MakeParameterLayout(OddConfig()).specs, Device::kCpu);
  std::vector<float> values(store.total_elements(), 0.0f);
  for (int i = 0; i < store.size(); ++i) {
    for (int64_t k = 0; k < store.range(i).size; ++k) {
      values[store.range(i).offset + k] = 1.0f + 0.001f * static_cast<float>((k * 7 + i) % 501);
    }
  }
  store.master().CopyFromFloats(values);
  store.grads().CopyFromFloats(values);
  store.EnableHalfCopy(DType::kBF16);
  ASSERT_EQ(store.half_dtype(), DType::kBF16);
  ASSERT_EQ(store.half_copy().dtype(), DType::kBF16);
  // every_parameter false: only those read in half, whose copy the optimizer keeps; true: every
  // parameter inside the half window (the LayerNorms between the Linears too).
  auto expect_rounded_masters = [&store](const char* when, bool every_parameter) {
    const std::vector<float> master = store.master().ToFloatVector();
    const BFloat16* half = store.half_copy().data<BFloat16>();
    const FlatRange window = store.half_window();
    int64_t inexact = 0;
    for (int i = 0; i < store.size(); ++i) {
      if (!every_parameter && !store.spec(i).read_in_half) continue;
      if (store.range(i).offset >= window.offset + window.size) continue;  // the embeddings: no copy
      for (int64_t k = store.range(i).offset; k < store.range(i).offset + store.range(i).size; ++k) {
        const BFloat16 copy = half[k - window.offset];
        ASSERT_EQ(copy.bits, FloatToBFloat16(master[k]).bits) << when << ", element " << k;
        inexact += BFloat16ToFloat(copy) != master[k];
      }
    }
    EXPECT_GT(inexact, 0) << when << ": the masters must not all be bf16 values already";
  };
  expect_rounded_masters("after EnableHalfCopy", true);
  optim::AdamW adamw(store, optim::AdamWOptions{});
  adamw.Step(1e-3);
  expect_rounded_masters("after an AdamW step", false);
  EXPECT_DEATH(store.EnableHalfCopy(DType::kF16), "after bf16");
}

// The half working copy mirrors only the span of the parameters read in half: XLM-R's
// embeddings, which come last (backward order) and are read in fp32, get none (the allocator's
// count says so),
// every Linear's half view is the copy of its own range, and the window's size is what
// ParameterStore::SizesOf predicts without allocating.
TEST(ParameterStoreTest, HalfCopyLeavesTheEmbeddingsOut) {
  const std::vector<ParameterSpec> specs = models::MakeParameterLayout(OddConfig()).specs;
  ParameterStore store(specs, Device::kCpu);
  std::vector<float> values(store.total_elements());
  for (int64_t k = 0; k < store.total_elements(); ++k) values[k] = 1.0f + 0.001f * static_cast<float>(k % 997);
  store.master().CopyFromFloats(values);
  const int64_t weights_before = MemoryStatsFor(Device::kCpu).Of(MemoryCategory::kWeights).current;
  store.EnableHalfCopy(DType::kF16);
  const FlatRange window = store.half_window();
  EXPECT_EQ(MemoryStatsFor(Device::kCpu).Of(MemoryCategory::kWeights).current - weights_before, 2 * window.size);
  EXPECT_EQ(ParameterStore::SizesOf(specs).half_window, window.size);
  EXPECT_EQ(ParameterStore::SizesOf(specs).total, store.total_elements());
  int first_in_half = -1;
  for (int i = 0; i < store.size(); ++i) {
    SCOPED_TRACE(store.spec(i).name);
    const FlatRange& range = store.range(i);
    if (store.spec(i).name.find("embeddings") != std::string::npos) {
      EXPECT_FALSE(store.spec(i).read_in_half);
      EXPECT_GE(range.offset, window.offset + window.size) << "an embedding inside the half window";
    }
    if (!store.spec(i).read_in_half) continue;
    if (first_in_half < 0) first_in_half = i;
    EXPECT_GE(range.offset, window.offset);
    EXPECT_LE(range.offset + range.size, window.offset + window.size);
    const std::vector<float> half = store.half_param(i).ToFloatVector();
    for (int64_t k = 0; k < range.size; ++k) {
      ASSERT_EQ(half[k], HalfToFloat(FloatToHalf(values[range.offset + k]))) << "element " << k;
    }
  }
  ASSERT_GE(first_in_half, 0);
  EXPECT_EQ(window.offset, store.range(first_in_half).offset);
  EXPECT_EQ((window.offset + window.size) % kAlign, 0);
  EXPECT_LT(window.size, store.total_elements() - OddConfig().vocab_size * OddConfig().hidden_size);
}

// Checkpoints store moments packed (the ranges in spec order, padding dropped); ScatterPacked
// puts each value back in its range, leaving padding untouched.
TEST(ParameterStoreTest, ScatterPackedPutsThePackedLayoutBackInTheRanges) {
  ParameterStore store(models::MakeParameterLayout(OddConfig()).specs, Device::kCpu);
  const std::vector<bool> padding = PaddingMask(store);
  std::vector<float> flat_values(store.total_elements(), 0.0f);
  std::vector<float> expected_packed;
  for (int i = 0; i < store.size(); ++i) {
    for (int64_t k = 0; k < store.range(i).size; ++k) {
      const float value = static_cast<float>(i) * 1000.0f + static_cast<float>(k);
      flat_values[store.range(i).offset + k] = value;
      expected_packed.push_back(value);
    }
  }
  ASSERT_EQ(static_cast<int64_t>(expected_packed.size()), store.packed_elements());
  Tensor packed = Tensor::Zeros({store.packed_elements()}, DType::kF32);
  packed.CopyFromFloats(expected_packed);

  Tensor restored = Tensor::Zeros({store.total_elements()}, DType::kF32);
  store.ScatterPacked(packed, restored);
  EXPECT_EQ(restored.ToFloatVector(), flat_values);
}

}  // namespace
}  // namespace xlmr
