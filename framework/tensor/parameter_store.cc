#include "framework/tensor/parameter_store.h"

#include <utility>

namespace xlmr {
namespace {

// A function-local static, so registration from another file's static initialiser cannot run
// before this is constructed.
HalfCopyRefreshFn& RegisteredHalfCopyRefresh() {
  static HalfCopyRefreshFn refresh = nullptr;
  return refresh;
}

}  // namespace

void RegisterDeviceHalfCopyRefresh(HalfCopyRefreshFn refresh) {
  RegisteredHalfCopyRefresh() = refresh;
}

ParameterStore::ParameterStore(std::vector<ParameterSpec> specs, Device device)
    : specs_(std::move(specs)) {
  int64_t offset = 0;
  for (size_t i = 0; i < specs_.size(); ++i) {
    const ParameterSpec& spec = specs_[i];
    ranges_.push_back({offset, NumElements(spec.shape)});
    if (buckets_.empty() || spec.bucket != specs_[i - 1].bucket) {
      XLMR_CHECK(!buckets_.empty() || spec.bucket == 0) << "the first bucket must be 0";
      XLMR_CHECK(buckets_.empty() || spec.bucket == specs_[i - 1].bucket + 1)
          << "buckets must be numbered 0, 1, 2, ... along the parameter order: " << spec.name;
      buckets_.push_back({offset, 0});
    }
    buckets_.back().size += ranges_.back().size;
    offset += ranges_.back().size;
  }
  master_ = Tensor::Zeros({offset}, DType::kF32, device, MemoryCategory::kWeights);
  grads_ = Tensor::Zeros({offset}, DType::kF32, device, MemoryCategory::kGradients);
}

int ParameterStore::Find(const std::string& name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Tensor ParameterStore::half_param(int i) const {
  XLMR_CHECK(half_.defined()) << "fp16 working copy requested before EnableHalfCopy()";
  return half_.View(ranges_[i].offset, specs_[i].shape);
}

void ParameterStore::ZeroGrads() {
  AllocatorFor(grads_.device()).Zero(grads_.raw_data(), grads_.bytes());
}

void ParameterStore::EnableHalfCopy() {
  if (!half_.defined()) {
    half_ = Tensor::Zeros({total_elements()}, DType::kF16, master_.device(), MemoryCategory::kWeights);
  }
  RefreshHalfCopy();
}

void ParameterStore::RefreshHalfCopy() {
  XLMR_CHECK(half_.defined()) << "RefreshHalfCopy() before EnableHalfCopy()";
  if (master_.device() != Device::kCpu) {
    XLMR_CHECK(RegisteredHalfCopyRefresh() != nullptr)
        << "no fp16 working-copy refresh registered for " << DeviceName(master_.device())
        << " (link //kernels/cuda:optim)";
    RegisteredHalfCopyRefresh()(master_, half_);
    return;
  }
  const float* src = master_.data<float>();
  Half* dst = half_.data<Half>();
  for (int64_t i = 0; i < master_.numel(); ++i) dst[i] = FloatToHalf(src[i]);
}

}  // namespace xlmr
