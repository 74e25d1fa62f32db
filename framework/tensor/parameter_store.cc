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

int64_t AlignUp(int64_t elements) {
  constexpr int64_t kAlign = ParameterStore::kAlignmentElements;
  return (elements + kAlign - 1) / kAlign * kAlign;
}

void CheckFlatF32(const Tensor& tensor, int64_t elements, const char* what) {
  XLMR_CHECK(tensor.defined() && tensor.dtype() == DType::kF32 && tensor.numel() == elements)
      << "ParameterStore: " << what << " must be f32 with " << elements << " elements";
}

// Each parameter's range: every range starts aligned, where the previous one ends rounded up.
std::vector<FlatRange> RangesOf(const std::vector<ParameterSpec>& specs) {
  std::vector<FlatRange> ranges;
  int64_t offset = 0;
  for (const ParameterSpec& spec : specs) {
    ranges.push_back({offset, NumElements(spec.shape)});
    offset = AlignUp(offset + ranges.back().size);
  }
  return ranges;
}

// ParameterStore::half_window(): the hull of the read_in_half ranges, its end aligned (every
// range starts aligned, so the aligned end is at most the next range's start).
FlatRange HalfWindowOf(const std::vector<ParameterSpec>& specs, const std::vector<FlatRange>& ranges) {
  int64_t begin = -1, end = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].read_in_half) continue;
    if (begin < 0) begin = ranges[i].offset;
    end = ranges[i].offset + ranges[i].size;
  }
  if (begin < 0) return {0, 0};
  return {begin, AlignUp(end) - begin};
}

// half[k] = master[k] rounded to nearest even in half's dtype; CUDA tensors through the
// registered device refresh.
void RoundToHalf(const Tensor& master, Tensor& half) {
  if (master.device() != Device::kCpu) {
    XLMR_CHECK(RegisteredHalfCopyRefresh() != nullptr)
        << "no half working-copy refresh registered for " << DeviceName(master.device())
        << " (link //kernels/cuda:optim)";
    RegisteredHalfCopyRefresh()(master, half);
    return;
  }
  const float* src = master.data<float>();
  if (half.dtype() == DType::kBF16) {
    BFloat16* dst = half.data<BFloat16>();
    for (int64_t i = 0; i < master.numel(); ++i) dst[i] = FloatToBFloat16(src[i]);
    return;
  }
  Half* dst = half.data<Half>();
  for (int64_t i = 0; i < master.numel(); ++i) dst[i] = FloatToHalf(src[i]);
}

}  // namespace

void RegisterDeviceHalfCopyRefresh(HalfCopyRefreshFn refresh) {
  RegisteredHalfCopyRefresh() = refresh;
}

ParameterStore::FlatSizes ParameterStore::SizesOf(const std::vector<ParameterSpec>& specs) {
  const std::vector<FlatRange> ranges = RangesOf(specs);
  const int64_t total = ranges.empty() ? 0 : AlignUp(ranges.back().offset + ranges.back().size);
  return {total, HalfWindowOf(specs, ranges).size};
}

ParameterStore::ParameterStore(std::vector<ParameterSpec> specs, Device device)
    : specs_(std::move(specs)), ranges_(RangesOf(specs_)) {
  // A bucket ends where the next begins, so its size counts its trailing padding.
  int64_t offset = 0;
  for (size_t i = 0; i < specs_.size(); ++i) {
    const ParameterSpec& spec = specs_[i];
    if (buckets_.empty() || spec.bucket != specs_[i - 1].bucket) {
      XLMR_CHECK(!buckets_.empty() || spec.bucket == 0) << "the first bucket must be 0";
      XLMR_CHECK(buckets_.empty() || spec.bucket == specs_[i - 1].bucket + 1)
          << "buckets must be numbered 0, 1, 2, ... along the parameter order: " << spec.name;
      buckets_.push_back({offset, 0});
    }
    packed_elements_ += ranges_[i].size;
    offset = AlignUp(ranges_[i].offset + ranges_[i].size);
    buckets_.back().size = offset - buckets_.back().offset;
  }
  half_window_ = HalfWindowOf(specs_, ranges_);
  master_ = Tensor::Zeros({offset}, DType::kF32, device, MemoryCategory::kWeights);
  grads_ = Tensor::Zeros({offset}, DType::kF32, device, MemoryCategory::kGradients);
}

int ParameterStore::Find(const std::string& name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void ParameterStore::ScatterPacked(const Tensor& packed, Tensor& flat) const {
  CheckFlatF32(packed, packed_elements_, "the packed tensor");
  CheckFlatF32(flat, total_elements(), "the flat destination");
  int64_t at = 0;
  for (const FlatRange& range : ranges_) {
    CopyBytes(static_cast<float*>(flat.raw_data()) + range.offset, flat.device(),
              static_cast<const float*>(packed.raw_data()) + at, packed.device(),
              static_cast<size_t>(range.size) * sizeof(float));
    at += range.size;
  }
}

Tensor ParameterStore::half_param(int i) const {
  XLMR_CHECK(half_dtype_ != DType::kF32) << "half working copy requested before EnableHalfCopy()";
  XLMR_CHECK(specs_[i].read_in_half) << specs_[i].name << " is not read in half: its half copy is not kept";
  if (half_.defined()) return half_.View(ranges_[i].offset - half_window_.offset, specs_[i].shape);
  Tensor copy = Tensor::Empty(specs_[i].shape, half_dtype_, master_.device(), MemoryCategory::kWorkspace);
  RoundToHalf(param(i), copy);
  return copy;
}

void ParameterStore::ZeroGrads() {
  AllocatorFor(grads_.device()).Zero(grads_.raw_data(), grads_.bytes());
}

void ParameterStore::EnableHalfCopy(DType dtype, HalfCopy mode) {
  XLMR_CHECK(dtype == DType::kF16 || dtype == DType::kBF16)
      << "EnableHalfCopy: the working copy is f16 or bf16, not " << DTypeName(dtype);
  XLMR_CHECK(half_dtype_ == DType::kF32 || half_dtype_ == dtype)
      << "EnableHalfCopy(" << DTypeName(dtype) << ") after " << DTypeName(half_dtype_);
  XLMR_CHECK(half_dtype_ == DType::kF32 || half_mode_ == mode) << "EnableHalfCopy: the mode changed";
  half_dtype_ = dtype;
  half_mode_ = mode;
  if (mode == HalfCopy::kOnDemand) return;
  if (!half_.defined()) {
    half_ = Tensor::Zeros({half_window_.size}, dtype, master_.device(), MemoryCategory::kWeights);
  }
  RefreshHalfCopy();
}

void ParameterStore::RefreshHalfCopy() {
  XLMR_CHECK(half_dtype_ != DType::kF32) << "RefreshHalfCopy() before EnableHalfCopy()";
  if (!half_.defined() || half_window_.size == 0) return;  // kOnDemand keeps nothing
  RoundToHalf(master_.View(half_window_.offset, {half_window_.size}), half_);
}

}  // namespace xlmr
