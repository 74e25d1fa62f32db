#include "kernels/cpu/embedding.h"

#include <vector>

#include "framework/core/check.h"
#include "kernels/cpu/float_access.h"

namespace xlmr::kernels::cpu {
namespace {

// The i-th id, checked against the vocabulary size. The data layer validates user ids, so an
// id out of range here is a programming error.
int64_t CheckedId(const Tensor& ids, int64_t i, int64_t vocab_size) {
  const int64_t id = ids.data<int32_t>()[i];
  XLMR_CHECK(id >= 0 && id < vocab_size)
      << "embedding id " << id << " at position " << i << " outside [0, " << vocab_size << ")";
  return id;
}

}  // namespace

Tensor EmbeddingForward(const Tensor& table, const Tensor& ids, DType out_dtype) {
  const int64_t vocab_size = table.dim(0);
  const int64_t width = table.dim(1);
  Shape out_shape = ids.shape();
  out_shape.push_back(width);
  Tensor out = Tensor::Zeros(out_shape, out_dtype, table.device(), MemoryCategory::kActivations);
  const float* rows = table.data<float>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = CheckedId(ids, i, vocab_size);
    StoreFloats(rows + id * width, i * width, width, &out);
  }
  return out;
}

void EmbeddingBackward(const Tensor& dy, const Tensor& ids, int64_t padding_idx, Tensor* dtable) {
  const int64_t vocab_size = dtable->dim(0);
  const int64_t width = dtable->dim(1);
  float* rows = dtable->data<float>();
  std::vector<float> grad(static_cast<size_t>(width));
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = CheckedId(ids, i, vocab_size);
    if (id == padding_idx) continue;
    LoadFloats(dy, i * width, width, grad.data());
    float* row = rows + id * width;
    for (int64_t j = 0; j < width; ++j) row[j] += grad[j];
  }
}

}  // namespace xlmr::kernels::cpu
