#include "framework/random/philox.h"

#include "framework/core/check.h"

namespace xlmr {
namespace {

void CheckSite(const DropoutKey& key) {
  XLMR_CHECK_LT(key.layer, 1u << 16) << "dropout layer id does not fit the Philox counter";
  XLMR_CHECK_LT(key.op, 1u << 16) << "dropout op id does not fit the Philox counter";
}

}  // namespace

PhiloxKey DropoutPhiloxKey(const DropoutKey& key) {
  return {static_cast<uint32_t>(key.seed), static_cast<uint32_t>(key.seed >> 32)};
}

PhiloxCounter DropoutCounter(const DropoutKey& key, int64_t block) {
  CheckSite(key);
  XLMR_CHECK(block >= 0 && block < (int64_t{1} << 32))
      << "dropout block " << block << " outside the 32-bit counter word";
  return {static_cast<uint32_t>(block), (key.op << 16) | key.layer, key.micro_step, key.step};
}

float DropoutUniform(const DropoutKey& key, int64_t index) {
  XLMR_CHECK(index >= 0 && index < kMaxDropoutElements) << "dropout element " << index;
  const PhiloxOutput words = Philox4x32_10(DropoutCounter(key, index / 4), DropoutPhiloxKey(key));
  return UniformFromWord(words[index % 4]);
}

void DropoutUniforms(const DropoutKey& key, int64_t begin, int64_t count, float* out) {
  XLMR_CHECK(begin >= 0 && count >= 0 && begin + count <= kMaxDropoutElements)
      << "dropout elements [" << begin << ", " << begin + count << ")";
  if (count == 0) return;
  const PhiloxKey philox_key = DropoutPhiloxKey(key);
  const int64_t end = begin + count;
  for (int64_t block = begin / 4; block * 4 < end; ++block) {
    const PhiloxOutput words = Philox4x32_10(DropoutCounter(key, block), philox_key);
    const int64_t first = block * 4 < begin ? begin : block * 4;
    const int64_t last = block * 4 + 4 < end ? block * 4 + 4 : end;
    for (int64_t index = first; index < last; ++index) {
      out[index - begin] = UniformFromWord(words[index - block * 4]);
    }
  }
}

}  // namespace xlmr
