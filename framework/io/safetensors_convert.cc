// ToTensor: a safetensors tensor as an F32 Tensor, widening 16-bit floats exactly.
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "framework/io/safetensors.h"
#include "framework/tensor/half.h"

namespace xlmr::io {
namespace {

// Reads the i-th 16-bit element; the source may be unaligned, hence memcpy.
uint16_t Bits16At(const uint8_t* bytes, int64_t i) {
  uint16_t bits;
  std::memcpy(&bits, bytes + 2 * i, sizeof bits);
  return bits;
}

}  // namespace

absl::StatusOr<Tensor> ToTensor(const SafetensorsFile& file, absl::string_view name, Device device,
                                MemoryCategory category) {
  const SafetensorsTensor* source = file.Find(name);
  if (source == nullptr) {
    return absl::NotFoundError(absl::StrCat(file.path(), ": no tensor named '", name, "'"));
  }
  const std::string& dtype = source->dtype;
  if (dtype != "F32" && dtype != "F16" && dtype != "BF16") {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path(), ": dtype ", dtype,
        " cannot be converted to F32 (only F32, F16 and BF16 can) (tensor '", name, "')"));
  }
  Tensor host = Tensor::Zeros(source->shape, DType::kF32, Device::kCpu, category);
  const int64_t count = host.numel();
  const uint8_t* in = source->bytes.data();
  float* out = host.data<float>();
  if (dtype == "F32" && count > 0) {
    std::memcpy(out, in, static_cast<size_t>(count) * sizeof(float));
  } else if (dtype == "F16") {
    for (int64_t i = 0; i < count; ++i) out[i] = HalfToFloat(Half{Bits16At(in, i)});
  } else if (dtype == "BF16") {
    for (int64_t i = 0; i < count; ++i) out[i] = BFloat16ToFloat(BFloat16{Bits16At(in, i)});
  }
  if (device == Device::kCpu) return host;
  return host.ToDevice(device, category);
}

}  // namespace xlmr::io
