#include "models/encoder/init.h"

#include <cmath>

#include "absl/strings/match.h"
#include "framework/random/philox.h"
#include "models/families.h"

namespace xlmr::models {
namespace {

// Fills `values` with N(0, stddev) samples from Philox keyed by (seed, stream).
void FillNormal(float* values, int64_t count, float stddev, uint64_t seed, uint32_t stream) {
  const PhiloxKey key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  for (int64_t block = 0; block * 4 < count; ++block) {
    const PhiloxOutput words = Philox4x32_10(
        {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), stream, 0x1a1du}, key);
    for (int pair = 0; pair < 2; ++pair) {
      // Box-Muller; u1 in (0, 1] so the log is finite.
      const double u1 = 1.0 - UniformFromWord(words[2 * pair]);
      const double u2 = UniformFromWord(words[2 * pair + 1]);
      const double radius = std::sqrt(-2.0 * std::log(u1));
      const double samples[2] = {radius * std::cos(2.0 * M_PI * u2),
                                 radius * std::sin(2.0 * M_PI * u2)};
      for (int j = 0; j < 2; ++j) {
        const int64_t index = block * 4 + pair * 2 + j;
        if (index < count) values[index] = static_cast<float>(samples[j] * stddev);
      }
    }
  }
}

void InitializeParameter(EncoderModel& model, int index, uint64_t seed) {
  const ParameterStore& store = model.parameters();
  const ParameterSpec& spec = store.spec(index);
  Tensor host = Tensor::Zeros(spec.shape, DType::kF32, Device::kCpu, MemoryCategory::kWorkspace);
  float* values = host.data<float>();
  const bool is_norm = absl::StrContains(spec.name, "LayerNorm");
  const bool is_bias = absl::EndsWith(spec.name, ".bias");
  if (is_norm && !is_bias) {
    for (int64_t i = 0; i < host.numel(); ++i) values[i] = 1.0f;
  } else if (!is_bias) {
    FillNormal(values, host.numel(), model.config().initializer_range, seed,
               static_cast<uint32_t>(index));
    // nn.Embedding(padding_idx=pad): the word table, and RoBERTa's position table (BERT's
    // positions start at 0 and have no padding row).
    const bool position_padding = !model.config().family->positions_from_zero;
    const bool has_padding_row = absl::StrContains(spec.name, "word_embeddings") ||
                                 (position_padding && absl::StrContains(spec.name, "position_embeddings"));
    const int64_t pad = model.config().pad_token_id;
    if (has_padding_row && pad >= 0 && pad < spec.shape[0]) {
      for (int64_t j = 0; j < spec.shape[1]; ++j) values[pad * spec.shape[1] + j] = 0.0f;
    }
  }
  Tensor target = store.param(index);
  CopyBytes(target.raw_data(), target.device(), host.raw_data(), Device::kCpu, host.bytes());
}

}  // namespace

void InitializeAllWeights(EncoderModel& model, uint64_t seed) {
  for (int i = 0; i < model.parameters().size(); ++i) InitializeParameter(model, i, seed);
}

void InitializeHead(EncoderModel& model, uint64_t seed) {
  for (int i : model.layout().head_parameters) InitializeParameter(model, i, seed);
}

void InitializePooler(EncoderModel& model, uint64_t seed) {
  for (int i : model.layout().pooler_parameters) InitializeParameter(model, i, seed);
}

}  // namespace xlmr::models
