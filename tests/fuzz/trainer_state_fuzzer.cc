// Fuzz target: trainer_state.json of a checkpoint on arbitrary bytes, through both readers:
// the check that picks the checkpoint to resume from and the resume's loader (which then
// reads the moments: a tiny valid optimizer.safetensors written once).
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "framework/io/safetensors.h"
#include "framework/train/training_checkpoint.h"
#include "tests/fuzz/fuzz_file.h"

namespace {

// checkpoint-3/ with everything but trainer_state.json.
std::string CheckpointDir() {
  static const std::string dir = [] {
    const std::string d = xlmr::fuzz::ScratchDir() + "/checkpoint-3";
    std::filesystem::create_directories(d);
    for (const char* name : {"model.safetensors", "config.json"}) std::ofstream(d + "/" + name) << "x";
    xlmr::Tensor moments = xlmr::Tensor::Zeros({2}, xlmr::DType::kF32);
    (void)xlmr::io::WriteSafetensors(d + "/optimizer.safetensors", {{"exp_avg", moments}, {"exp_avg_sq", moments}}, {});
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = CheckpointDir();
  std::ofstream(dir + "/trainer_state.json", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  (void)xlmr::train::CheckCheckpointComplete(dir, 3);
  (void)xlmr::train::LoadTrainingCheckpoint(dir, 2);
  return 0;
}
